// The downtime page's countdown to the deadline (DT-01). Counted from the server's clock (the
// seconds left when the page was drawn), not the browser's, which may be wrong. Its words come
// from the page, in the reader's language: data-left ("{d} d {h} h {m} min left") and data-over.
(function () {
  "use strict";
  var el = document.getElementById("countdown");
  if (!el) {
    return;
  }
  var end = Date.now() + Number(el.dataset.remaining) * 1000;
  function tick() {
    var s = Math.max(0, Math.floor((end - Date.now()) / 1000));
    var d = Math.floor(s / 86400);
    var h = Math.floor((s % 86400) / 3600);
    var m = Math.floor((s % 3600) / 60);
    var left = el.dataset.left.replace("{d}", d).replace("{h}", h).replace("{m}", m);
    el.textContent = s ? "(" + left + ")" : el.dataset.over;
  }
  tick();
  setInterval(tick, 30000);
})();
