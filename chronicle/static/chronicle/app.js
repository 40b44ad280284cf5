// The few behaviours every page shares; no inline scripts (a Content-Security-Policy is coming).
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    var toggle = event.target.closest("[data-menu-toggle]");
    if (toggle) {
      var bar = toggle.closest("[data-topbar]");
      var open = bar.classList.toggle("open");
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
      return;
    }
    var dismiss = event.target.closest("[data-dismiss]");
    if (dismiss) {
      dismiss.closest(".toast").classList.add("gone");
    }
  });
  // A "confirm" on a destructive button: data-confirm="Are you sure …?"
  document.addEventListener("submit", function (event) {
    var button = event.submitter;
    var text = (button && button.dataset.confirm) || event.target.dataset.confirm;
    if (text && !window.confirm(text)) {
      event.preventDefault();
    }
  });
})();
