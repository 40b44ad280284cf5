// The print sheet's "Print this sheet" button (no inline handlers: a Content-Security-Policy
// is coming).
(function () {
  "use strict";
  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-print]")) {
      window.print();
    }
  });
})();
