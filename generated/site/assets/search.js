// Search over window.SEARCH_INDEX (loaded by a script tag, so it works from file://).
(function () {
  "use strict";
  var input = document.getElementById("search");
  var list = document.getElementById("search-results");
  var index = window.SEARCH_INDEX || [];
  var root = window.SITE_ROOT || "";
  function fold(text) {
    return text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  }
  var folded = index.map(function (entry) { return fold(entry.n); });
  function show() {
    var query = fold(input.value.trim());
    list.textContent = "";
    if (!query) { list.hidden = true; return; }
    var starts = [], contains = [];
    for (var i = 0; i < index.length; i++) {
      var at = folded[i].indexOf(query);
      if (at === 0) { starts.push(index[i]); } else if (at > 0) { contains.push(index[i]); }
    }
    var found = starts.concat(contains).slice(0, 50);
    found.forEach(function (entry) {
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = root + entry.u;
      link.textContent = entry.n;
      var where = document.createElement("small");
      where.textContent = " " + entry.k + " · " + entry.r;
      item.appendChild(link);
      item.appendChild(where);
      list.appendChild(item);
    });
    if (!found.length) {
      var none = document.createElement("li");
      none.textContent = "Nothing found";
      list.appendChild(none);
    }
    list.hidden = false;
  }
  input.addEventListener("input", show);

  // On a kind's page: narrow the entries to those whose text contains every word typed.
  var filter = document.getElementById("filter");
  if (filter) {
    var sections = Array.prototype.slice.call(document.querySelectorAll("section.entity"));
    var groups = Array.prototype.slice.call(document.querySelectorAll("h2.group"));
    var texts = sections.map(function (s) { return fold(s.textContent); });
    var count = document.getElementById("filter-count");
    var contents = {};
    Array.prototype.forEach.call(document.querySelectorAll("ol.toc a"), function (link) {
      contents[link.getAttribute("href").slice(1)] = link.parentNode;
    });
    filter.addEventListener("input", function () {
      var words = fold(filter.value).split(/\s+/).filter(Boolean);
      var shown = 0;
      sections.forEach(function (section, i) {
        var match = words.every(function (w) { return texts[i].indexOf(w) >= 0; });
        section.hidden = !match;
        if (contents[section.id]) { contents[section.id].hidden = !match; }
        if (match) { shown++; }
      });
      groups.forEach(function (group) {
        var next = group.nextElementSibling, any = false;
        while (next && !next.matches("h2.group")) {
          if (next.matches("section.entity") && !next.hidden) { any = true; }
          next = next.nextElementSibling;
        }
        group.hidden = !any;
      });
      count.textContent = words.length ? shown + " of " + sections.length : "";
    });
  }
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter") {
      var first = list.querySelector("a");
      if (first) { window.location.href = first.href; }
    } else if (event.key === "Escape") {
      input.value = ""; show();
    }
  });
})();
