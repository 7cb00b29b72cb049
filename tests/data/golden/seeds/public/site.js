// mapwatch pages: optional niceties. Every page works without this file (README, Feeds).
(function () {
  "use strict";
  // Copy buttons next to a feed address (hidden until this script shows them).
  document.querySelectorAll("button.copy").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field) { return; }
    button.hidden = false;
    field.addEventListener("focus", function () { field.select(); });
    button.addEventListener("click", function () {
      field.select();
      var done = function () {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = "Copy"; }, 2000);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(done, function () { document.execCommand("copy"); done(); });
      } else {
        document.execCommand("copy");
        done();
      }
    });
  });
  // The index's filter: hides the directions whose name, breadcrumb or slug lack every typed word.
  var form = document.querySelector("form.filter");
  if (!form) { return; }
  var input = form.querySelector("input");
  var none = document.querySelector(".filter-none");
  var rows = Array.prototype.slice.call(document.querySelectorAll("li.direction"));
  var areas = Array.prototype.slice.call(document.querySelectorAll("section.area"));
  form.hidden = false;
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var text = row.getAttribute("data-search") || "";
      var match = words.every(function (w) { return text.indexOf(w) !== -1; });
      row.hidden = !match;
      if (match) { shown += 1; }
    });
    areas.forEach(function (area) {
      area.hidden = !area.querySelector("li.direction:not([hidden])");
    });
    if (none) { none.hidden = shown !== 0; }
  }
  input.addEventListener("input", apply);
  // A filter can be shared as a link: /?q=reward
  var query = new URLSearchParams(window.location.search).get("q");
  if (query) { input.value = query; apply(); }
}());
