// The reference's behaviour: search (lazy index, combobox), filters, hover/tap previews, roll buttons.
// Vanilla JS, no network: data comes from script files injected on first use (a fetched file fails
// from file://).
(function () {
  "use strict";
  var ROOT = new URL(window.SITE_ROOT || "./", location.href).href;

  // ---------------------------------------------------------------- words (as html_search.py folds them)
  function fold(text) {
    return text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
  }
  function words(text) {
    return fold(text).match(/[\p{L}\p{N}]+/gu) || [];
  }

  // a fragment may be written by hand, and not be valid percent-encoding (#%E0%A4%A): then it is taken as written
  function decoded(text) {
    try {
      return decodeURIComponent(text);
    } catch (malformed) {
      return text;
    }
  }

  // ---------------------------------------------------------------- loading data scripts once
  var loading = {};
  function load(src, done) {
    if (loading[src] === true) { done(); return; }
    if (loading[src]) { loading[src].push(done); return; }
    loading[src] = [done];
    var script = document.createElement("script");
    script.src = src;
    script.onload = function () {
      var waiting = loading[src];
      loading[src] = true;
      waiting.forEach(function (f) { f(); });
    };
    script.onerror = function () { loading[src] = true; };
    document.head.appendChild(script);
  }

  // ---------------------------------------------------------------- the search index
  // In pieces (search-index.js says how many; search/N.js each), joined here into one index: entries and
  // pages numbered on from piece to piece, each term's postings the pieces' lists, read with their offsets.
  var index = null, pieces = [];
  window.rulesdslSearchPiece = function (n, piece) { pieces[n] = piece; };
  function withIndex(done) {
    if (index) { done(index); return; }
    load(ROOT + "search-index.js", function () {
      var head = window.SEARCH_INDEX;
      if (!head) { return; }
      var waiting = head.n;
      if (!waiting) { index = joined(head); done(index); return; }
      for (var n = 0; n < head.n; n++) {
        load(ROOT + "search/" + n + ".js", function () {
          if (--waiting) { return; }
          for (var i = 0; i < head.n; i++) { if (!pieces[i]) { return; } }  // a piece missing: no search
          if (!index) { index = joined(head); }
          done(index);
        });
      }
    });
  }

  function joined(head) {
    var raw = { r: head.r, k: head.k, g: [], e: [], t: [], p: [], f: [] };
    var byTerm = new Map(), fieldAt = new Map(), also = {};
    for (var n = 0; n < head.n; n++) {
      var piece = pieces[n], first = raw.e.length, firstPage = raw.g.length;
      piece.g.forEach(function (page) { raw.g.push(page); });
      piece.e.forEach(function (e) { raw.e.push([e[0], e[1], e[2] + firstPage, e[3], e[4]]); });
      var fields = piece.f.map(function (name) {
        if (!fieldAt.has(name)) { fieldAt.set(name, raw.f.length); raw.f.push(name); }
        return fieldAt.get(name);
      });
      piece.t.forEach(function (term, i) {
        var lists = byTerm.get(term);
        if (!lists) { byTerm.set(term, lists = []); }
        lists.push({ first: first, text: piece.p[i], fields: fields });
      });
      // entry -> the homebrews that hold it unchanged (it is listed once, where defined)
      (piece.a || []).forEach(function (row) { also[row[0] + first] = row.slice(1); });
    }
    raw.t = Array.from(byTerm.keys()).sort();  // as lowerBound compares
    raw.p = raw.t.map(function (term) { return byTerm.get(term); });
    return { raw: raw, folded: raw.e.map(function (e) { return fold(e[0]); }), decoded: new Map(), also: also };
  }

  // A term's postings: its entries (entry*4+weight, ascending) and the field each was found in (-1: none said).
  function postings(ix, term) {
    var found = ix.decoded.get(term);
    if (found) { return found; }
    var lists = ix.raw.p[term], parts = [], at = [];
    lists.forEach(function (list) {
      list.text.split(",").forEach(function (part) { parts.push(part); at.push(list); });
    });
    var entries = new Int32Array(parts.length), fields = new Int32Array(parts.length);
    var value = 0, current = null;
    for (var i = 0; i < parts.length; i++) {
      if (at[i] !== current) { current = at[i]; value = current.first * 4; }  // a piece's list starts at its first entry
      var dot = parts[i].indexOf(".");  // "delta.field" for a word found in a field besides the name
      value += parseInt(dot < 0 ? parts[i] : parts[i].slice(0, dot), 36);
      entries[i] = value;
      fields[i] = dot < 0 ? -1 : current.fields[parseInt(parts[i].slice(dot + 1), 36)];
    }
    found = { list: entries, fields: fields };
    ix.decoded.set(term, found);
    return found;
  }

  function lowerBound(list, word) {
    var lo = 0, hi = list.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (list[mid] < word) { lo = mid + 1; } else { hi = mid; }
    }
    return lo;
  }

  // Optimal string alignment distance, given up past `limit`.
  function distance(a, b, limit) {
    if (Math.abs(a.length - b.length) > limit) { return limit + 1; }
    var prev2 = null, prev = [], cur;
    for (var j = 0; j <= b.length; j++) { prev.push(j); }
    for (var i = 1; i <= a.length; i++) {
      cur = [i];
      var best = i;
      for (j = 1; j <= b.length; j++) {
        var cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
        var d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
        if (prev2 && i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
          d = Math.min(d, prev2[j - 2] + 1);
        }
        cur.push(d);
        if (d < best) { best = d; }
      }
      if (best > limit) { return limit + 1; }
      prev2 = prev;
      prev = cur;
    }
    return prev[b.length];
  }

  // Terms a query word matches, with how well: exactly 1, as a prefix less, with a typo less again.
  function termsFor(ix, word) {
    var terms = ix.raw.t, found = [];
    var at = lowerBound(terms, word);
    for (var j = at; j < terms.length && j < at + 400 && terms[j].lastIndexOf(word, 0) === 0; j++) {
      found.push([j, terms[j] === word ? 1 : 0.55 + 0.35 * word.length / terms[j].length]);
    }
    if (word.length >= 4) {
      var limit = word.length >= 8 ? 2 : 1;
      for (var k = 0; k < terms.length; k++) {
        var term = terms[k];
        if (Math.abs(term.length - word.length) > limit || term.lastIndexOf(word, 0) === 0) { continue; }
        if (term.charCodeAt(0) !== word.charCodeAt(0) && term.charCodeAt(1) !== word.charCodeAt(1)) { continue; }
        var d = distance(word, term, limit);
        if (d <= limit) { found.push([k, d === 1 ? 0.5 : 0.35]); }
      }
    }
    return found;
  }

  // A word found only in a description (weight 0) scores below any match in a name, alias or other field
  // (at least 0.35 a word), so such entries rank last.
  var DESCRIPTION_SCORE = 0.1;

  // The ruleset an entry is defined in, and whether a search kept to ruleset `scope` (-1: all) finds it.
  function rulesetOf(ix, e) { return ix.raw.k[ix.raw.e[e][1]][0]; }
  function inScope(ix, e, scope) {
    return scope < 0 || rulesetOf(ix, e) === scope || (ix.also[e] || []).indexOf(scope) >= 0;
  }

  // Entries ranked: every word must match (else the closest, flagged partial); names before other fields,
  // descriptions last. `described[e]` is 1 when each word of the entry's best match is only in its description;
  // `matched[e]` the fields (besides its name) its words were best found in. `scope`: a ruleset's index, or -1.
  function search(ix, query, scope) {
    var qwords = words(query);
    var n = ix.raw.e.length;
    if (scope === undefined) { scope = -1; }
    if (!qwords.length) { return { hits: [], partial: false, described: new Uint8Array(0), matched: {} }; }
    var total = new Float64Array(n), count = new Uint8Array(n), elsewhere = new Uint8Array(n), matched = {};
    qwords.forEach(function (word) {
      var best = new Float64Array(n), bestField = new Int32Array(n);
      termsFor(ix, word).forEach(function (match) {
        var found = postings(ix, match[0]), list = found.list;
        for (var i = 0; i < list.length; i++) {
          var entry = list[i] >> 2, weight = list[i] & 3;
          var score = (weight ? weight : DESCRIPTION_SCORE) * match[1];
          if (score > best[entry]) { best[entry] = score; bestField[entry] = found.fields[i] + 1; }
          if (weight) { elsewhere[entry] = 1; }
        }
      });
      for (var e = 0; e < n; e++) {
        if (best[e] > 0) {
          total[e] += best[e];
          count[e]++;
          var field = bestField[e] > 0 ? ix.raw.f[bestField[e] - 1] : "";
          if (field) {
            var said = matched[e] || (matched[e] = []);
            if (said.indexOf(field) < 0) { said.push(field); }
          }
        }
      }
    });
    var most = 0;
    for (var e = 0; e < n; e++) { if (count[e] > most && inScope(ix, e, scope)) { most = count[e]; } }
    if (!most) { return { hits: [], partial: false, described: new Uint8Array(0), matched: {} }; }
    var folded = fold(query.trim()), hits = [];
    for (e = 0; e < n; e++) {
      if (count[e] === most && inScope(ix, e, scope)) {
        var score = total[e];
        if (ix.folded[e] === folded) { score += 100; } else if (ix.folded[e].lastIndexOf(folded, 0) === 0) { score += 10; }
        hits.push([score, e]);
      }
    }
    hits.sort(function (a, b) {
      return b[0] - a[0] || ix.folded[a[1]].length - ix.folded[b[1]].length || a[1] - b[1];
    });
    var described = new Uint8Array(n);
    for (e = 0; e < n; e++) { described[e] = count[e] && !elsewhere[e] ? 1 : 0; }
    return { hits: hits.map(function (h) { return h[1]; }), partial: most < qwords.length, described: described,
             matched: matched };
  }
  // Hits in groups of their kind (by its title, across rulesets), each group where its best hit ranks.
  function grouped(ix, hits) {
    var groups = [], at = {};
    hits.forEach(function (e) {
      var title = ix.raw.k[ix.raw.e[e][1]][2];
      if (!(title in at)) { at[title] = groups.length; groups.push([title, []]); }
      groups[at[title]][1].push(e);
    });
    return groups;
  }
  // The entry a query names exactly (its label, or its label before a qualifier: "Born Noble (Men)"), if the best hit.
  function exactly(ix, hits, query) {
    var folded = fold(query.trim());
    if (!hits.length || !folded) { return -1; }
    var label = ix.folded[hits[0]];
    return label === folded || label.lastIndexOf(folded + " (", 0) === 0 ? hits[0] : -1;
  }
  // For the benchmark (benchmarks/site.py): load the index, then time queries on it.
  window.rulesdslLoadIndex = function (done) { withIndex(function () { done(); }); };
  window.rulesdslQuery = function (query) { return index ? search(index, query).hits.length : -1; };

  function entryUrl(ix, e) {
    var entry = ix.raw.e[e];
    return ROOT + ix.raw.g[entry[2]] + (entry[3] ? "#" + entry[3] : "");
  }
  function entryWhere(ix, e) {
    var entry = ix.raw.e[e], kind = ix.raw.k[entry[1]], ruleset = ix.raw.r[kind[0]];
    var also = (ix.also[e] || []).map(function (r) { return ix.raw.r[r][1]; });  // the kind heads its group
    return [entry[4], ruleset[1], also.length ? "also in " + also.join(", ") : ""].filter(Boolean).join(" · ");
  }
  // In the search box's listbox an option holds no link (a link inside an option is a control inside a
  // control): the option carries its address, and Enter or a click follows it.
  function resultItem(ix, e, tag, described, matched, option) {
    var item = document.createElement(tag);
    var link = document.createElement(option ? "span" : "a");
    if (option) {
      link.className = "r-link";
      item.setAttribute("data-href", entryUrl(ix, e));
    } else {
      link.href = entryUrl(ix, e);
    }
    var name = document.createElement("span");
    name.className = "r-name";
    name.textContent = ix.raw.e[e][0];
    var where = document.createElement("span");
    where.className = "r-where";
    where.textContent = entryWhere(ix, e);
    link.appendChild(name);
    link.appendChild(document.createTextNode(" "));
    link.appendChild(where);
    if (described) {
      var note = document.createElement("span");
      note.className = "r-described";
      note.textContent = "in the description";
      link.appendChild(document.createTextNode(" "));
      link.appendChild(note);
    } else if (matched && matched.length) {
      var fields = document.createElement("span");
      fields.className = "r-field";
      fields.textContent = "matched in " + matched.map(function (f) { return f.toLowerCase(); }).join(", ");
      link.appendChild(document.createTextNode(" "));
      link.appendChild(fields);
    }
    item.appendChild(link);
    return item;
  }

  // ---------------------------------------------------------------- the search box: a combobox
  var input = document.getElementById("rd-search");
  var list = document.getElementById("rd-results");
  var status = document.getElementById("rd-status");
  var active = -1;
  var LIMIT = 30;
  var last = null;  // the hits shown, for Enter on an exact name
  // Inside a ruleset, the search keeps to it (the scope chip, on by default): one click searches them all.
  var scopeChip = document.getElementById("rd-scope");
  function scopeIndex(ix, chip) {
    if (!chip || chip.getAttribute("aria-pressed") !== "true") { return -1; }
    var wanted = chip.getAttribute("data-ruleset");
    return ix.raw.r.findIndex(function (r) { return r[0] === wanted; });
  }

  function setActive(i) {
    var options = list.querySelectorAll("[role=option]");
    if (!options.length) { active = -1; input.removeAttribute("aria-activedescendant"); return; }
    active = (i + options.length) % options.length;
    options.forEach(function (o, k) { o.setAttribute("aria-selected", k === active ? "true" : "false"); });
    input.setAttribute("aria-activedescendant", options[active].id);
    options[active].scrollIntoView({ block: "nearest" });
  }
  function close() {
    list.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    active = -1;
  }
  function remember(query) {
    var url = new URL(location.href);
    if (query) { url.searchParams.set("q", query); } else { url.searchParams.delete("q"); }
    try { history.replaceState(history.state, "", url.href); } catch (err) { /* some browsers refuse on file:// */ }
  }
  function show() {
    var query = input.value;
    remember(query.trim());
    if (!query.trim()) { list.textContent = ""; close(); status.textContent = ""; return; }
    withIndex(function (ix) {
      if (input.value !== query) { return; }
      var scope = scopeIndex(ix, scopeChip);
      var result = search(ix, query, scope);
      last = { ix: ix, hits: result.hits, query: query };
      list.textContent = "";
      var k = 0;
      grouped(ix, result.hits.slice(0, LIMIT)).forEach(function (group, g) {
        var box = document.createElement("li");  // li (none) > ul (group, named by its head) > li (option)
        box.setAttribute("role", "none");
        var members = document.createElement("ul");
        members.setAttribute("role", "group");
        members.setAttribute("aria-labelledby", "rd-group-" + g);
        var head = document.createElement("li");
        head.setAttribute("role", "none");
        head.id = "rd-group-" + g;
        head.className = "r-group";
        head.textContent = group[0];
        members.appendChild(head);
        group[1].forEach(function (e) {
          var item = resultItem(ix, e, "li", result.described[e], result.matched[e], true);
          item.id = "rd-option-" + k++;
          item.setAttribute("role", "option");
          item.setAttribute("aria-selected", "false");
          members.appendChild(item);
        });
        box.appendChild(members);
        list.appendChild(box);
      });
      var note = document.createElement("li");  // an option too: a listbox holds options only
      note.className = "r-note";
      note.id = "rd-option-more";
      note.setAttribute("role", "option");
      note.setAttribute("aria-selected", "false");
      if (!result.hits.length) {
        note.textContent = "Nothing found";
        note.setAttribute("aria-disabled", "true");
      } else {
        var more = result.hits.length > LIMIT ? "Showing " + LIMIT + " of " + result.hits.length + ". " : "";
        var link = document.createElement("span");
        link.className = "r-all";
        link.textContent = "All results";
        note.setAttribute("data-href", ROOT + "search.html?q=" + encodeURIComponent(query.trim()) +
          (scope >= 0 ? "&in=" + encodeURIComponent(ix.raw.r[scope][0]) : ""));
        note.textContent = (result.partial ? "No entry has every word; closest matches. " : "") + more;
        note.appendChild(link);
      }
      list.appendChild(note);
      list.hidden = false;
      input.setAttribute("aria-expanded", "true");
      active = -1;
      input.removeAttribute("aria-activedescendant");
      status.textContent = result.hits.length + " results";
    });
  }
  input.addEventListener("focus", function () { withIndex(function () {}); });
  input.addEventListener("input", show);
  input.addEventListener("keydown", function (event) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (list.hidden) { show(); return; }
      setActive(event.key === "ArrowDown" ? active + 1 : Math.max(active, 0) - 1);  // up from none: the last
    } else if (event.key === "Enter") {
      event.preventDefault();
      var options = list.querySelectorAll("[role=option]");
      var exact = last && last.query === input.value ? exactly(last.ix, last.hits, input.value) : -1;
      if (active >= 0 && options[active] && options[active].hasAttribute("data-href")) {
        location.href = options[active].getAttribute("data-href");
      } else if (exact >= 0) {  // the exact name of an entry: open it
        location.href = entryUrl(last.ix, exact);
      } else if (input.value.trim()) {
        var scoped = scopeChip && scopeChip.getAttribute("aria-pressed") === "true";
        location.href = ROOT + "search.html?q=" + encodeURIComponent(input.value.trim()) +
          (scoped ? "&in=" + encodeURIComponent(scopeChip.getAttribute("data-ruleset")) : "");
      }
    } else if (event.key === "Escape") {
      event.preventDefault();  // a search box would clear itself: the first Escape only closes the list
      if (!list.hidden) { close(); } else { input.value = ""; show(); }
    }
  });
  if (scopeChip) {
    scopeChip.hidden = false;
    scopeChip.addEventListener("mousedown", function (event) { event.preventDefault(); });  // keep the box's focus
    scopeChip.addEventListener("click", function () {
      var on = scopeChip.getAttribute("aria-pressed") !== "true";
      scopeChip.setAttribute("aria-pressed", on ? "true" : "false");
      if (input.value.trim()) { show(); }
    });
  }
  list.addEventListener("mousedown", function (event) { event.preventDefault(); });  // keep focus for clicks
  list.addEventListener("click", function (event) {
    var item = event.target.closest("[role=option][data-href]");
    if (item) { location.href = item.getAttribute("data-href"); }
  });
  document.addEventListener("click", function (event) {
    if (!event.target.closest(".search")) { close(); }
  });
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target.closest && target.closest("input, textarea, select, [contenteditable]");
    if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      input.focus();
      input.select();
    }
  });

  // The query lives in the URL: ?q= reopens the results (and fills the search page).
  var initial = new URL(location.href).searchParams.get("q");
  var pageQuery = document.getElementById("rd-query");
  if (pageQuery) {
    var pageResults = document.getElementById("rd-page-results");
    var pageStatus = document.getElementById("rd-page-status");
    var pageScope = document.getElementById("rd-page-scope");
    var within = new URL(location.href).searchParams.get("in");
    pageQuery.value = initial || "";
    input.value = "";
    var fill = function (ix) {  // the results grouped by kind, each group ranked
      var scope = scopeIndex(ix, pageScope);
      var result = search(ix, initial, scope);
      pageResults.textContent = "";
      grouped(ix, result.hits.slice(0, 500)).forEach(function (group) {
        var section = document.createElement("section");
        var head = document.createElement("h2");
        head.textContent = group[0] + " (" + group[1].length + ")";
        var items = document.createElement("ol");
        items.className = "results";
        group[1].forEach(function (e) { items.appendChild(resultItem(ix, e, "li", result.described[e], result.matched[e])); });
        section.appendChild(head);
        section.appendChild(items);
        pageResults.appendChild(section);
      });
      pageResults.querySelectorAll("a").forEach(function (a) { a.removeAttribute("tabindex"); });
      pageStatus.textContent = result.hits.length
        ? result.hits.length + " results" + (result.partial ? " (no entry has every word; closest matches)" : "")
        : "Nothing found.";
    };
    if (initial) {
      pageStatus.textContent = "Searching…";
      withIndex(function (ix) {
        var at = within ? ix.raw.r.findIndex(function (r) { return r[0] === within; }) : -1;
        if (at >= 0) {  // a search begun inside a ruleset stays there, one click from all of them
          pageScope.setAttribute("data-ruleset", within);
          pageScope.textContent = "Only " + ix.raw.r[at][1];
          pageScope.hidden = false;
          pageScope.addEventListener("click", function () {
            var on = pageScope.getAttribute("aria-pressed") !== "true";
            pageScope.setAttribute("aria-pressed", on ? "true" : "false");
            var url = new URL(location.href);
            if (on) { url.searchParams.set("in", within); } else { url.searchParams.delete("in"); }
            try { history.replaceState(history.state, "", url.href); } catch (err) { /* file:// */ }
            fill(ix);
          });
        }
        fill(ix);
      });
    }
  } else if (initial) {
    input.value = initial;
    show();
  }

  // ---------------------------------------------------------------- filters on a page of entries
  Array.prototype.forEach.call(document.querySelectorAll("p.filter"), function (box) {
    box.hidden = false;
    var field = box.querySelector("input");
    var count = box.querySelector(".filter-count");
    var scope = box.parentNode;
    var entries = Array.prototype.slice.call(scope.querySelectorAll(".entity"));
    var texts = null;
    field.addEventListener("input", function () {
      if (!texts) { texts = entries.map(function (e) { return fold(e.textContent); }); }
      var wanted = words(field.value), shown = 0;
      entries.forEach(function (entry, i) {
        var match = wanted.every(function (w) { return texts[i].indexOf(w) >= 0; });
        entry.hidden = !match;
        if (match) { shown++; }
      });
      count.textContent = wanted.length ? shown + " of " + entries.length : "";
    });
  });

  // ---- lists: facets and sorting ----
  // A kind's list: filters from its declaration (form.facets, built by facets.py) and columns that sort
  // (th[data-sort]). Their state lives in the URL's query string, so a view of a list can be shared; a
  // parameter the list does not know, or a value no entry has any more, is ignored with a note.
  Array.prototype.forEach.call(document.querySelectorAll("form.facets"), function (form) {
    var scope = form.parentNode;
    var entries = Array.prototype.slice.call(scope.querySelectorAll(".entity"));
    var table = scope.querySelector("table.entities");
    var selects = Array.prototype.slice.call(form.querySelectorAll("select"));
    var textFields = Array.prototype.slice.call(form.querySelectorAll("input[data-text]"));
    var wordsField = form.querySelector("input[name=text]");
    var count = form.querySelector(".filter-count");
    var note = form.querySelector(".facet-note");
    var heads = table && table.tHead ? Array.prototype.slice.call(table.tHead.rows[0].cells) : [];
    var sorted = null;  // [column, "ascending" | "descending"]
    var chosen = entries.map(function (entry) {  // per entry, per choice facet: the options it has
      return (entry.getAttribute("data-f") || "").split(",").map(function (part) {
        var has = {};
        if (part) { part.split(".").forEach(function (i) { has[i] = true; }); }
        return has;
      });
    });
    var texts = null;
    function folded(entry, attribute) { return fold(entry.getAttribute(attribute) || ""); }
    selects.forEach(function (select) {
      Array.prototype.forEach.call(select.options, function (o) { o.setAttribute("data-label", o.textContent); });
    });

    // does entry k pass every filter but the choice facet `except`?
    function passes(k, except) {
      for (var i = 0; i < selects.length; i++) {
        var at = selects[i].selectedIndex - 1;
        if (i !== except && at >= 0 && !chosen[k][i][at]) { return false; }
      }
      for (i = 0; i < textFields.length; i++) {
        var wanted = words(textFields[i].value), have = folded(entries[k], "data-t" + textFields[i].getAttribute("data-text"));
        if (!wanted.every(function (w) { return have.indexOf(w) >= 0; })) { return false; }
      }
      var asked = words(wordsField.value);
      if (asked.length) {
        if (!texts) { texts = entries.map(function (e) { return fold(e.textContent); }); }
        if (!asked.every(function (w) { return texts[k].indexOf(w) >= 0; })) { return false; }
      }
      return true;
    }
    function update() {
      var shown = 0, filtering = false;
      selects.forEach(function (s) { if (s.selectedIndex > 0) { filtering = true; } });
      textFields.concat([wordsField]).forEach(function (f) { if (words(f.value).length) { filtering = true; } });
      entries.forEach(function (entry, k) {
        var on = passes(k, -1);
        entry.hidden = !on;
        if (on) { shown++; }
      });
      count.textContent = filtering ? shown + " of " + entries.length : entries.length + " in all";
      scope.querySelectorAll("section.letter").forEach(function (letter) {  // a kind's names under their letters
        letter.hidden = !letter.querySelector(".entity:not([hidden])");
      });
      selects.forEach(function (select, i) {  // how many each value would show, with the other filters kept
        var tally = [];
        for (var o = 0; o < select.options.length; o++) { tally.push(0); }
        entries.forEach(function (entry, k) {
          if (!passes(k, i)) { return; }
          tally[0]++;
          Object.keys(chosen[k][i]).forEach(function (at) { tally[+at + 1]++; });
        });
        Array.prototype.forEach.call(select.options, function (option, o) {
          option.textContent = option.getAttribute("data-label") + " (" + tally[o] + ")";
        });
      });
    }
    function save() {
      var url = new URL(location.href);
      selects.concat(textFields, [wordsField]).forEach(function (f) {
        if (f.value.trim()) { url.searchParams.set(f.name, f.value.trim()); } else { url.searchParams.delete(f.name); }
      });
      if (sorted) {
        var field = heads[sorted[0]].getAttribute("data-field");
        url.searchParams.set("sort", (sorted[1] === "descending" ? "-" : "") + field);
      } else {
        url.searchParams.delete("sort");
      }
      try { history.replaceState(history.state, "", url.href); } catch (err) { /* some browsers refuse on file:// */ }
    }
    var original = table ? Array.prototype.slice.call(table.tBodies) : [];
    var order = null;  // the same as a choice in the form: on a phone the headers are out of sight
    function sortBy(column, direction) {
      heads.forEach(function (th) { th.removeAttribute("aria-sort"); });
      if (column < 0) {  // as listed
        sorted = null;
        if (order) { order.value = ""; }
        original.forEach(function (body) { table.appendChild(body); });
        return;
      }
      heads[column].setAttribute("aria-sort", direction);
      sorted = [column, direction];
      if (order) { order.value = (direction === "descending" ? "-" : "") + heads[column].getAttribute("data-field"); }
      var numeric = heads[column].getAttribute("data-sort") === "number";
      var keyed = original.map(function (body, i) {
        var cell = body.rows[0].cells[column], key = null;
        if (numeric) {  // the number apart (3^ is 3.5), else the one the text starts with ("6 yrs")
          var number = parseFloat(cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent);
          key = isNaN(number) ? null : number;
        } else {
          key = cell.textContent.trim() || null;
        }
        return { body: body, i: i, key: key };
      });
      var sign = direction === "ascending" ? 1 : -1;
      keyed.sort(function (a, b) {  // entries without a value last, either way
        if (a.key === null || b.key === null) { return (a.key === null) - (b.key === null) || a.i - b.i; }
        var by = numeric ? a.key - b.key : a.key.localeCompare(b.key, "en", { sensitivity: "base", numeric: true });
        return sign * by || a.i - b.i;
      });
      keyed.forEach(function (k) { table.appendChild(k.body); });
    }
    if (heads.some(function (th) { return th.getAttribute("data-sort"); })) {
      var holder = document.createElement("p"), label = document.createElement("label");
      holder.className = "facet";
      order = document.createElement("select");
      label.appendChild(document.createTextNode("Sort "));
      label.appendChild(order);
      holder.appendChild(label);
      form.querySelector(".facet-list").appendChild(holder);
      order.appendChild(new Option("as listed", ""));
      heads.forEach(function (th) {
        var how = th.getAttribute("data-sort"), name = th.textContent.trim();
        if (!how) { return; }
        var field = th.getAttribute("data-field"), numeric = how === "number";
        order.appendChild(new Option(name + (numeric ? ", lowest first" : ", A to Z"), field));
        order.appendChild(new Option(name + (numeric ? ", highest first" : ", Z to A"), "-" + field));
      });
      order.addEventListener("change", function (event) {
        event.stopPropagation();
        var field = order.value.replace(/^-/, "");
        var column = heads.findIndex(function (th) { return th.getAttribute("data-field") === field; });
        sortBy(order.value ? column : -1, order.value.charAt(0) === "-" ? "descending" : "ascending");
        save();
      });
    }
    heads.forEach(function (th, column) {
      if (!th.getAttribute("data-sort")) { return; }
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) { button.appendChild(th.firstChild); }
      th.appendChild(button);
      button.addEventListener("click", function () {
        sortBy(column, th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending");
        save();
      });
    });

    // the query string: what it asks for, and a note on what it asks that the list cannot do
    var params = new URL(location.href).searchParams, notes = [], known = { q: true, sort: true };
    selects.concat(textFields, [wordsField]).forEach(function (f) { known[f.name] = true; });
    params.forEach(function (value, key) {
      if (!known[key]) { notes.push("“" + key + "” is not a filter of this list: ignored."); }
    });
    selects.forEach(function (select) {
      var value = params.get(select.name);
      if (!value) { return; }
      var found = Array.prototype.findIndex.call(select.options, function (o, i) { return i > 0 && o.value === value; });
      if (found > 0) {
        select.selectedIndex = found;
      } else {
        var label = select.parentNode.firstChild.textContent.trim();
        notes.push("No entry here has " + label.toLowerCase() + " “" + value + "”: that filter is ignored.");
      }
    });
    textFields.concat([wordsField]).forEach(function (f) { f.value = params.get(f.name) || ""; });
    var sort = params.get("sort");
    if (sort) {
      var direction = sort.charAt(0) === "-" ? "descending" : "ascending", field = sort.replace(/^-/, "");
      var column = heads.findIndex(function (th) { return th.getAttribute("data-sort") && th.getAttribute("data-field") === field; });
      if (column >= 0) { sortBy(column, direction); } else { notes.push("This list cannot sort by “" + field + "”: ignored."); }
    }
    if (notes.length) { note.textContent = notes.join(" "); note.hidden = false; }
    // the choices fold away when there are none, and on a phone until asked for (or the URL chose some)
    var more = form.querySelector("details.facet-more");
    if (!more.querySelector(".facet")) {
      more.remove();
    } else if (window.matchMedia("(max-width: 40rem)").matches) {
      more.open = sorted !== null || selects.concat(textFields).some(function (f) { return f.value; });
    }

    form.hidden = false;
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    form.addEventListener("input", function () { update(); save(); });
    form.addEventListener("change", function () { update(); save(); });
    form.addEventListener("reset", function () {
      setTimeout(function () { note.hidden = true; if (table) { sortBy(-1, ""); } update(); save(); }, 0);
    });
    update();
  });

  // ---------------------------------------------------------------- roll buttons (seeded or not)
  function seeded(text) {  // mulberry32, seeded from the text
    var h = 1779033703 ^ text.length;
    for (var i = 0; i < text.length; i++) {
      h = Math.imul(h ^ text.charCodeAt(i), 3432918353);
      h = (h << 13) | (h >>> 19);
    }
    var state = h >>> 0;
    return function () {
      state = (state + 0x6D2B79F5) >>> 0;
      var t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  function fresh() {
    var buffer = new Uint32Array(1);
    window.crypto.getRandomValues(buffer);
    return buffer[0] / 4294967296;
  }
  function keyMatches(key, number) {
    if (Array.isArray(key)) { return (key[0] === null || number >= key[0]) && (key[1] === null || number <= key[1]); }
    if (key === "odd" || key === "even") { return number % 2 === (key === "odd" ? 1 : 0); }
    return false;  // a named key is looked up, never rolled
  }
  Array.prototype.forEach.call(document.querySelectorAll("p.roll"), function (box) {
    box.hidden = false;
    var spec = JSON.parse(box.getAttribute("data-roll"));
    var button = box.querySelector("button");
    var seedField = box.querySelector(".roll-seed");
    var modifierField = box.querySelector(".roll-modifier");
    var output = box.querySelector("output");
    var table = box.nextElementSibling.querySelector("table");
    var random = null, seedUsed = null;
    function die(sides) { return 1 + Math.floor(random() * sides); }
    button.addEventListener("click", function () {
      var seed = seedField.value.trim();
      if (seed !== seedUsed) { random = seed ? seeded(seed) : fresh; seedUsed = seed; }
      var modifier = modifierField ? Math.max(spec.low, Math.min(spec.high, parseInt(modifierField.value, 10) || 0)) : 0;
      var numbers = [], faces = [];
      if (spec.tens) {  // d66: two d6 read as tens and units
        var tens = die(6), units = die(6);
        faces.push(tens, units);
        numbers.push(10 * tens + units + modifier);
      } else {
        spec.dice.forEach(function (term, key) {
          var total = term[term.length - 1] + (key === 0 ? modifier : 0);
          term.slice(0, -1).forEach(function (dice) {
            for (var i = 0; i < dice[0]; i++) { var face = die(dice[1]); faces.push(face); total += face; }
          });
          numbers.push(total);
        });
      }
      var hit = null;
      var rest = null;  // the otherwise row (no keys): what no other row takes
      table.querySelectorAll("[data-k]").forEach(function (element) {
        var keys = JSON.parse(element.getAttribute("data-k"));
        if (!keys.length) { rest = element; }
        var on = !hit && keys.length > 0 && numbers.every(function (n, i) { return keyMatches(keys[i], n); });
        element.classList.toggle("rolled", on);
        if (on) { hit = element; }
      });
      if (!hit && rest) { rest.classList.add("rolled"); hit = rest; }
      var shown = faces.length > numbers.length || modifier ? " (" + faces.join(" + ") + (modifier ? " + " + modifier : "") + ")" : "";
      var what = "past the rows";
      if (hit && hit.tagName === "TR") {
        what = Array.prototype.slice.call(hit.cells, numbers.length + 1).map(function (c) { return c.textContent; }).join(", ");
      } else if (hit) {
        what = hit.textContent;
      }
      output.textContent = "Rolled " + numbers.join(", ") + shown + ": " + what;
    });
  });

  // ---------------------------------------------------------------- pool odds: one pool size at a time
  Array.prototype.forEach.call(document.querySelectorAll("p.pool-pick"), function (box) {
    box.hidden = false;
    var select = box.querySelector("select");
    var pools = box.parentNode.querySelectorAll(".pool");
    function pick() {
      pools.forEach(function (pool) { pool.hidden = pool.getAttribute("data-dice") !== select.value; });
    }
    select.addEventListener("change", pick);
    pick();
  });

  // ---------------------------------------------------------------- lifepath graphs, drawn when opened
  // Where a lifepath can come from (its setting, settings leading in, lifepaths its requirements name)
  // and where it leads: three columns of links, in the style of the stock graphs drawn at build time.
  var drawings = {};
  window.rulesdslGraphs = function (page, data) { drawings[page] = data; };
  var here = location.href.split("#")[0].split("?")[0];
  var thisPage = here.lastIndexOf(ROOT, 0) === 0 ? here.slice(ROOT.length) : "";
  var SVG = "http://www.w3.org/2000/svg";
  function svgElement(name, attributes) {
    var element = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach(function (k) { element.setAttribute(k, attributes[k]); });
    return element;
  }
  // A label's lines (as graphs.py wraps them): words joined while they fit in 20 characters; nothing is cut.
  function wrapLabel(label) {
    var lines = [];
    label.split(/\s+/).filter(Boolean).forEach(function (word) {
      var last = lines.length - 1;
      if (last >= 0 && lines[last].length + 1 + word.length <= 20) { lines[last] += " " + word; } else { lines.push(word); }
    });
    return lines.length ? lines : [""];
  }
  function labelWidth(lines) {
    return Math.max.apply(null, lines.map(function (l) { return l.length; })) * 7.2 + 20;
  }
  function drawGraph(data, entry, key) {
    var nodes = data.nodes, GAP = 10, PAD = 10;
    var columns = [
      entry[1].map(function (f) { return { at: f[0], css: "from", weight: f[1] }; })
        .concat(entry[2].map(function (r) { return { at: r, css: "required", weight: 1 }; })),
      [{ at: entry[0], css: "self", weight: 1 }],
      entry[3].map(function (t) { return { at: t, css: "to", weight: 1 }; })
    ];
    var LINE = 15;
    columns.forEach(function (column) {
      column.forEach(function (n) { n.lines = wrapLabel(nodes[n.at][0]); n.h = n.lines.length * LINE + 12; });
    });
    function extent(column) {
      return column.reduce(function (sum, n) { return sum + n.h; }, 0) + GAP * Math.max(column.length - 1, 0);
    }
    var tallest = Math.max.apply(null, columns.map(extent));
    var x = PAD, placed = [];
    columns.forEach(function (column) {
      var widest = Math.max.apply(null, column.map(function (n) { return labelWidth(n.lines); }));
      var y = PAD + (tallest - extent(column)) / 2;
      placed.push(column.map(function (n) {
        var p = { n: n, x: x + widest / 2, y: y + n.h / 2, w: labelWidth(n.lines), h: n.h };
        y += n.h + GAP;
        return p;
      }));
      x += widest + 70;
    });
    var width = x - 70 + PAD, height = tallest + 2 * PAD;
    var svg = svgElement("svg", { "class": "graph", viewBox: "0 0 " + width + " " + height, width: width,
      height: height, role: "group" });
    svg.setAttribute("aria-label", "Where " + nodes[entry[0]][0] + " can come from and lead to");
    var marker = "rd-arrow-lp-" + key;
    var defs = svgElement("defs", {});
    var head = svgElement("marker", { id: marker, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
      markerHeight: 7, orient: "auto-start-reverse" });
    head.appendChild(svgElement("path", { d: "M0,0L10,5L0,10z", "class": "arrowhead" }));
    defs.appendChild(head);
    svg.appendChild(defs);
    var me = placed[1][0];
    function line(a, b, dashed, weight) {
      svg.appendChild(svgElement("line", { "class": dashed ? "edge dashed" : "edge", x1: a.x + a.w / 2 + 2, y1: a.y,
        x2: b.x - b.w / 2 - 2, y2: b.y, "stroke-width": Math.min(1 + Math.floor(weight / 3), 4),
        "marker-end": "url(#" + marker + ")" }));
    }
    placed[0].forEach(function (p) { line(p, me, p.n.css === "required", p.n.weight); });
    placed[2].forEach(function (p) { line(me, p, false, 1); });
    placed.forEach(function (column) {
      column.forEach(function (p) {
        var link = svgElement("a", { href: new URL(nodes[p.n.at][1], ROOT + thisPage).href, "class": "node " + p.n.css });
        var title = svgElement("title", {});
        title.textContent = nodes[p.n.at][0] + { from: " (a lifepath there can lead here)",
          required: " (named in its requirements)", self: "", to: " (it leads there)" }[p.n.css];
        link.appendChild(title);
        link.appendChild(svgElement("rect", { x: p.x - p.w / 2, y: p.y - p.h / 2, width: p.w, height: p.h, rx: 5 }));
        var text = svgElement("text", { "text-anchor": "middle" });
        p.n.lines.forEach(function (words, i) {
          if (i) { text.appendChild(document.createTextNode(" ")); }
          var row = svgElement("tspan", { x: p.x, y: p.y - (p.n.lines.length - 1) * LINE / 2 + 4 + i * LINE });
          row.textContent = words;
          text.appendChild(row);
        });
        link.appendChild(text);
        svg.appendChild(link);
      });
    });
    return svg;
  }
  // ---- accessible, phone, print, graphs (a11y) ----
  // The same as a list, shown instead of the drawing on a narrow screen.
  function graphList(data, entry) {
    var nodes = data.nodes, list = document.createElement("ul");
    list.className = "graph-list";
    [["Comes from", entry[1].map(function (f) { return f[0]; })], ["Named in its requirements", entry[2]],
     ["Leads to", entry[3]]].forEach(function (group) {
      if (!group[1].length) { return; }
      var item = document.createElement("li");
      item.appendChild(document.createTextNode(group[0] + ": "));
      group[1].forEach(function (at, i) {
        if (i) { item.appendChild(document.createTextNode(", ")); }
        var link = document.createElement("a");
        link.href = new URL(nodes[at][1], ROOT + thisPage).href;
        link.textContent = nodes[at][0];
        item.appendChild(link);
      });
      list.appendChild(item);
    });
    return list;
  }
  // ---- end of a11y ----
  Array.prototype.forEach.call(document.querySelectorAll("details.graph"), function (box) {
    box.hidden = false;
    box.addEventListener("toggle", function () {
      if (!box.open || box.querySelector("svg")) { return; }
      load(ROOT + "previews/" + thisPage.replace(/\.html$/, ".graphs.js"), function () {
        var data = drawings[thisPage], id = box.closest(".entity").id;
        if (!data || !data.graphs[id] || box.querySelector("svg")) { return; }
        var holder = document.createElement("div");
        holder.className = "scroll graph-drawing";
        holder.appendChild(drawGraph(data, data.graphs[id], id));
        box.appendChild(holder);
        box.appendChild(graphList(data, data.graphs[id]));
      });
    });
  });

  // ---------------------------------------------------------------- previews of linked entries
  var preview = document.getElementById("rd-preview");
  var shards = window.rulesdslShards = {};
  window.rulesdslPreviews = function (page, entries) { shards[page] = entries; };
  var shownFor = null, timer = null, touch = false;

  function target(link) {
    var href = link.getAttribute("href");
    if (!href || href.charAt(0) === "#" && !link.closest("main")) { return null; }
    var url = new URL(href, location.href);
    var path = url.href.split("#")[0].split("?")[0];
    if (path.lastIndexOf(ROOT, 0) !== 0) { return null; }
    var page = path.slice(ROOT.length);
    if (!/^[^/]+\/[^/]+\.html$/.test(page)) { return null; }
    return { page: page, key: decoded(url.hash.slice(1)), url: url.href };
  }
  function place(link) {
    var box = link.getBoundingClientRect();
    preview.style.left = "0px";
    preview.style.top = "0px";
    preview.hidden = false;
    var width = preview.offsetWidth, height = preview.offsetHeight;
    var left = Math.max(8, Math.min(box.left, document.documentElement.clientWidth - width - 8));
    var top = box.bottom + 6;
    if (top + height > window.innerHeight && box.top - height - 6 > 0) { top = box.top - height - 6; }
    preview.style.left = left + window.scrollX + "px";
    preview.style.top = top + window.scrollY + "px";
  }
  function open(link, done) {
    var where = target(link);
    if (!where) { return; }
    load(ROOT + "previews/" + where.page.replace(/\.html$/, ".js"), function () {
      var html = (shards[where.page] || {})[where.key];
      if (html === undefined) { if (done) { done(false, where); } return; }
      preview.innerHTML = html;  // built at build time from escaped text; links are relative to that page
      preview.querySelectorAll("a[href]").forEach(function (a) {
        a.setAttribute("href", new URL(a.getAttribute("href"), ROOT + where.page).href);
      });
      preview.querySelectorAll(".roll").forEach(function (p) { p.remove(); });
      if (touch) {
        var go = document.createElement("a");
        go.href = where.url;
        go.className = "pv-open";
        go.textContent = "Open";
        preview.appendChild(go);
      }
      shownFor = link;
      place(link);
      if (done) { done(true, where); }
    });
  }
  function hide() {
    preview.hidden = true;
    shownFor = null;
  }
  document.addEventListener("pointerdown", function (event) { touch = event.pointerType === "touch"; }, true);
  document.addEventListener("mouseover", function (event) {
    var link = event.target.closest && event.target.closest("main a[href], .preview a[href]");
    if (!link || touch || link.closest(".preview")) { return; }
    clearTimeout(timer);
    timer = setTimeout(function () { open(link); }, 300);
  });
  document.addEventListener("mouseout", function (event) {
    var link = event.target.closest && event.target.closest("main a[href]");
    if (!link || touch) { return; }
    clearTimeout(timer);
    timer = setTimeout(function () {
      if (!preview.matches(":hover")) { hide(); }
    }, 300);
  });
  preview.addEventListener("mouseleave", function () { if (!touch) { hide(); } });
  document.addEventListener("focusin", function (event) {
    var link = event.target.closest && event.target.closest("main a[href]");
    if (link && !touch) { open(link); } else if (!preview.contains(event.target)) { hide(); }
  });
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("main a[href]");
    if (!link || !touch || shownFor === link || !target(link)) {
      if (!preview.contains(event.target)) { hide(); }
      return;
    }
    event.preventDefault();  // first tap: preview; a second tap (or "Open") follows the link
    open(link, function (found, where) { if (!found) { location.href = where.url; } });
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && !preview.hidden) { hide(); }
  });
})();
