// The influence desk as a work queue (issue 12): keyboard shortcuts, the two panes kept in step,
// and the character type-ahead. Everything works without it (links, forms, full pages); this
// file only makes it quicker. No inline scripts: the page marks what it means with data-*.
//   j / k       open the next / previous item of the list
//   a           assign the open item to me
//   r           mark the open item resolved and go to its result
//   Ctrl+Enter  save and open the next item (from inside the item's form)
//   Esc         leave a field, so the keys above work again
(function () {
  "use strict";

  var DETAIL = "desk-detail";

  function desk() { return document.querySelector("[data-desk]"); }
  function pane() { return document.getElementById(DETAIL); }
  function openItem() { var p = pane(); return p && p.querySelector("[data-desk-item]"); }
  function rows() { return Array.prototype.slice.call(document.querySelectorAll("[data-desk-row]")); }

  function typingIn(target) {
    if (!target || !target.closest) { return false; }
    return Boolean(target.closest("input, textarea, select, [contenteditable=''], [contenteditable='true']"));
  }

  // The open item's row is marked in the list, and the rows' Take buttons come back to it.
  function markCurrent() {
    var item = openItem();
    var pk = item ? item.getAttribute("data-desk-item") : "";
    rows().forEach(function (row) {
      if (row.getAttribute("data-pk") === pk) {
        row.setAttribute("aria-current", "true");
      } else {
        row.removeAttribute("aria-current");
      }
    });
    var open = document.querySelector("[data-desk-open-pk]");
    if (open) { open.value = pk; }
  }

  // htmx wires new content up when it settles, a moment after the swap: a key pressed in
  // between would follow a link or send a form as a full page. Wire it up now (it is done once).
  function live(element) {
    if (window.htmx) { window.htmx.process(element.closest("form") || element); }
    return element;
  }

  function follow(link) {
    if (link) { live(link).click(); return true; }
    return false;
  }

  // j / k: the neighbour in the list on screen; past either end of the page (or when the
  // open item is not on it), the pane's own previous / next link, which knows the whole list.
  function move(step) {
    var list = rows();
    var item = openItem();
    var pk = item ? item.getAttribute("data-desk-item") : null;
    var at = -1;
    list.forEach(function (row, index) { if (row.getAttribute("data-pk") === pk) { at = index; } });
    if (at >= 0 && list[at + step]) {
      return follow(list[at + step].querySelector("[data-desk-open]"));
    }
    if (item) {
      return follow(item.querySelector(step > 0 ? "[data-desk-next]" : "[data-desk-prev]"));
    }
    if (list.length) {
      var row = step > 0 ? list[0] : list[list.length - 1];
      return follow(row.querySelector("[data-desk-open]"));
    }
    return false;
  }

  function press(selector) {
    var item = openItem();
    var button = item && item.querySelector(selector);
    if (button && !button.disabled) { live(button).click(); return true; }
    return false;
  }

  // r: choose "Resolved" and go to the result for the player (the ST writes it, then saves).
  function resolve() {
    var item = openItem();
    var status = item && item.querySelector("select[name=status]");
    if (!status || status.disabled) { return false; }
    status.value = "resolved";
    status.dispatchEvent(new Event("change", { bubbles: true }));
    var result = item.querySelector("textarea[name=result]");
    (result || status).focus();
    return true;
  }

  document.addEventListener("keydown", function (event) {
    if (!desk() || event.defaultPrevented || event.isComposing) { return; }
    var target = event.target;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      if (target.closest && target.closest("[data-desk-form]") && press("[data-desk-key=save-next]")) {
        event.preventDefault();
      }
      return;
    }
    if (typingIn(target)) {
      if (event.key === "Escape" && target.blur) { target.blur(); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var done = false;
    switch (event.key) {
      case "j": done = move(1); break;
      case "k": done = move(-1); break;
      case "a": done = press("[data-desk-key=a]"); break;
      case "r": done = resolve(); break;
      default: return;
    }
    if (done) { event.preventDefault(); }
  });

  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest("[data-desk-resolve]")) { resolve(); }
  });

  // The item pane answers a refused save with 400 or 409 and the form with its errors (or
  // the other storyteller's version): show it, as the full page would.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var status = event.detail.xhr.status;
    var target = event.detail.target;
    if ((status === 400 || status === 409) && target && target.id === DETAIL) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  function enhance() {
    var item = openItem();
    var resolveButton = item && item.querySelector("[data-desk-resolve]");
    if (resolveButton) { resolveButton.hidden = false; }
    markCurrent();
  }

  document.addEventListener("htmx:afterSwap", function (event) {
    enhance();
    if (event.detail.target && event.detail.target.id === DETAIL) {
      // A newly opened item takes the focus (read out, and the keys keep working); on a
      // phone, where the panes stack, this also brings it into view.
      var heading = pane().querySelector("[data-desk-focus]");
      if (heading) { heading.focus(); }
    }
  });

  // A Take in the list changed the open item: reload its pane, so its form is not stale.
  document.addEventListener("deskItemChanged", function (event) {
    var item = openItem();
    var pk = event.detail && String(event.detail.pk);
    if (item && pk === item.getAttribute("data-desk-item") && window.htmx) {
      window.htmx.ajax("GET", item.getAttribute("data-desk-url"), { target: "#" + DETAIL });
    }
  });

  // The filters leave their empty fields out of the address they push ("?game=1&status=new",
  // not "?game=1&kind=&action=&status=new&…"): shorter to share, the same list.
  document.addEventListener("htmx:configRequest", function (event) {
    var data = event.detail.formData;
    if (!event.detail.elt || event.detail.elt.id !== "desk-filters" || !data) { return; }
    Array.from(data.keys()).forEach(function (key) {
      if (data.getAll(key).every(function (value) { return value === ""; })) { data.delete(key); }
    });
  });

  // The character type-ahead: picking a suggestion (the field then holds "Name #id") applies
  // the filter at once; a datalist pick fires only "input", so say "change" for it. The
  // browser's own "change" on leaving the field would apply it twice: let that one go.
  document.addEventListener("input", function (event) {
    var field = event.target;
    if (!field.matches || !field.matches("[data-typeahead]") || !field.list) { return; }
    var picked = Array.prototype.some.call(field.list.options, function (option) {
      return option.value === field.value;
    });
    if (picked && field.dataset.sent !== field.value) {
      field.dataset.sent = field.value;
      field.dispatchEvent(new Event("change", { bubbles: true }));
    }
  });
  document.addEventListener("change", function (event) {
    var field = event.target;
    if (field.matches && field.matches("[data-typeahead]") && event.isTrusted && field.dataset.sent === field.value) {
      event.stopPropagation();
    }
  }, true);

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", enhance);
  } else {
    enhance();
  }
})();
