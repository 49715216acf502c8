// Draws the grid from the embedded JSON (see reports/grid.py) and filters its rows.
// Text reaches the page only through textContent and title, never as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("grid-data").textContent);
  var S = data.strings, builds = data.builds, table = document.getElementById("grid");
  var rows = data.rows.map(function (row) {
    return {
      name: row[0], lower: row[0].toLowerCase(), tags: S[row[1]] ? S[row[1]].split(",") : [],
      tier: S[row[2]], category: S[row[3]], runs: row[4], tr: null
    };
  });

  function cell(tr, code, icon, message, href) {
    var td = document.createElement("td");
    td.className = "s" + code;
    if (message) td.title = message;
    if (href) {
      var a = document.createElement("a");
      a.href = href;
      a.textContent = icon || "F";
      td.appendChild(a);
    } else if (icon) {
      td.textContent = icon;
    }
    tr.appendChild(td);
  }

  function row(name, runs, count, className) {
    var tr = document.createElement("tr"), th = document.createElement("th");
    if (className) tr.className = className;
    th.className = "name";
    th.textContent = name;
    th.title = name;
    tr.appendChild(th);
    for (var i = 0, col = 0; i < runs.length && col < count; i += 5) {
      var code = data.codes[runs[i]], message = S[runs[i + 2]], diag = S[runs[i + 3]], icon = S[runs[i + 4]];
      for (var n = runs[i + 1]; n > 0 && col < count; n--, col++) {
        // A failure links to its diagnostics, or to its build's directory when it has none (upstream).
        var failed = code === "F" || code === "K";
        cell(tr, code, icon, message, diag ? builds[col].h + "/" + diag : failed ? builds[col].h + "/" : "");
      }
    }
    return tr;
  }

  function header(label, key, count, link) {
    var tr = document.createElement("tr"), th = document.createElement("th");
    th.className = "label";
    th.textContent = label;
    tr.appendChild(th);
    for (var col = 0; col < count; col++) {
      var h = document.createElement("th"), text = document.createElement(link ? "a" : "div");
      text.textContent = builds[col][key];
      h.title = builds[col][key];
      if (link) {
        text.href = builds[col].h + "/";
        h.appendChild(document.createElement("div")).appendChild(text);
      } else {
        h.appendChild(text);
      }
      tr.appendChild(h);
    }
    return tr;
  }

  function draw() {
    var wanted = parseInt(document.getElementById("columns").value, 10);
    var count = wanted > 0 ? Math.min(wanted, builds.length) : builds.length;
    var head = document.createElement("thead"), body = document.createElement("tbody");
    [["Started (UTC)", "t"], ["Build", "id", true], ["Kubernetes", "k"], ["Windows build", "w"],
     ["Runtime", "r"]].forEach(function (h) { head.appendChild(header(h[0], h[1], count, h[2])); });
    body.appendChild(row("Overall", data.overall, count, "overall"));
    rows.forEach(function (r) { r.tr = row(r.name, r.runs, count, ""); body.appendChild(r.tr); });
    table.replaceChildren(head, body);
    filter();
  }

  function value(id) {
    var element = document.getElementById(id);
    return element ? element.value : "";
  }

  function filter() {
    var text = value("filter").toLowerCase(), tag = value("filter-tag");
    var tier = value("filter-tier"), category = value("filter-category"), shown = 0;
    rows.forEach(function (r) {
      var visible = (!text || r.lower.indexOf(text) >= 0) && (!tag || r.tags.indexOf(tag) >= 0) &&
        (!tier || r.tier === tier) && (!category || r.category === category);
      r.tr.hidden = !visible;
      shown += visible ? 1 : 0;
    });
    document.getElementById("shown").textContent = shown + " of " + rows.length + " tests";
  }

  ["filter", "filter-tag", "filter-tier", "filter-category"].forEach(function (id) {
    var element = document.getElementById(id);
    if (element) element.addEventListener("input", filter);
  });
  document.getElementById("columns").addEventListener("change", draw);
  draw();
})();
