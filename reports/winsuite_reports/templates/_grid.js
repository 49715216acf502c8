// Draws the grid from the embedded JSON (see reports/grid.py) and filters its rows.
// Text reaches the page only through textContent and title, never as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("grid-data").textContent);
  var S = data.strings, builds = data.builds, table = document.getElementById("grid");
  var rows = data.rows.map(function (row) {
    return {
      name: row[0], lower: row[0].toLowerCase(), tags: S[row[1]] ? S[row[1]].split(",") : [],
      tier: S[row[2]], category: S[row[3]], engine: S[row[4]], runs: row[5], cluster: S[row[6]], id: row[7],
      tr: null
    };
  });

  // Where row `id` ran in build `col`: the build's node set its code names (see reports/placement.py).
  function ranOn(col, id) {
    var b = builds[col], alphabet = data.placementAlphabet;
    if (id < 0 || !b.p) return "";
    var code = b.p.substr(id * b.pw, b.pw), index = 0;
    if (!code.trim()) return "";
    for (var k = 0; k < code.length; k++) index = index * alphabet.length + alphabet.indexOf(code[k]);
    return S[b.o[index]];
  }

  // A cell's detail: its message, the evidence that decided a failure's class, and the nodes it ran on.
  function detail(message, evidence, nodes) {
    var lines = [];
    if (message) lines.push(message);
    if (evidence) lines.push("evidence: " + evidence);
    if (nodes) lines.push("ran on: " + nodes);
    return lines.join("\n");
  }

  function cell(tr, code, icon, message, href, failureClass) {
    var td = document.createElement("td");
    td.className = "s" + code + (failureClass ? " c-" + failureClass : "");
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

  function row(name, runs, count, className, engine, cluster, id) {
    var tr = document.createElement("tr"), th = document.createElement("th");
    if (className) tr.className = className;
    th.className = "name";
    th.title = engine ? name + " (" + engine + ")" : name;
    if (engine) th.dataset.engine = engine;
    if (cluster) {  // a failed test's name links the cluster of its newest failure, on the Failures page
      var link = th.appendChild(document.createElement("a"));
      link.className = "cluster";
      link.href = "failures.html#" + cluster;
      link.textContent = name;
      th.title += "\nits newest failure's cluster: Failures page";
    } else {
      th.textContent = name;
    }
    tr.appendChild(th);
    for (var i = 0, col = 0; i < runs.length && col < count; i += data.runWidth) {
      var code = data.codes[runs[i]], message = S[runs[i + 2]], diag = S[runs[i + 3]], icon = S[runs[i + 4]];
      var failureClass = S[runs[i + 5]], evidence = S[runs[i + 6]];
      for (var n = runs[i + 1]; n > 0 && col < count; n--, col++) {
        // A failure links to its diagnostics, or to its build's directory when it has none (upstream).
        var failed = code === "F" || code === "K";
        cell(tr, code, icon, detail(message, evidence, ranOn(col, id)),
          diag ? builds[col].h + "/" + diag : failed ? builds[col].h + "/" : "", code === "F" ? failureClass : "");
      }
    }
    return tr;
  }

  function label(tr, text) {
    var th = document.createElement("th");
    th.className = "label";
    th.textContent = text;
    tr.appendChild(th);
  }

  // The builds: one short rotated start time per column, linking the build's directory.
  function buildHeader(count) {
    var tr = document.createElement("tr");
    label(tr, "Build (started, UTC)");
    for (var col = 0; col < count; col++) {
      var h = document.createElement("th"), a = document.createElement("a");
      a.textContent = builds[col].s;
      a.href = builds[col].h + "/";
      h.title = "build " + builds[col].id + ", started " + builds[col].t;
      h.className = "build";
      h.appendChild(document.createElement("div")).appendChild(a);
      tr.appendChild(h);
    }
    return tr;
  }

  // A build's failed rows per class, and its flaky ones.
  function failuresHeader(count) {
    var tr = document.createElement("tr");
    label(tr, "Failures by class");
    for (var col = 0; col < count; col++) {
      var h = document.createElement("th"), text = S[builds[col].f], spelled = S[builds[col].ft];
      h.className = "failures";
      if (text) h.appendChild(document.createElement("div")).textContent = text;
      if (spelled) h.title = "build " + builds[col].id + ": " + spelled;
      tr.appendChild(h);
    }
    return tr;
  }

  // A build's node logs (kubelet, runtime, kube-proxy per node), when the run collected them.
  function nodeLogsHeader(count) {
    var tr = document.createElement("tr");
    label(tr, "Node logs");
    for (var col = 0; col < count; col++) {
      var h = document.createElement("th");
      h.className = "logs";
      if (builds[col].n) {
        var a = document.createElement("a");
        a.href = builds[col].n;
        a.textContent = "▤";
        a.title = "node logs of build " + builds[col].id;
        h.appendChild(a);
      }
      tr.appendChild(h);
    }
    return tr;
  }

  // The environment's recorded axes (versions, Windows builds, runtimes), which rarely change from build to build:
  // one horizontal cell per run of equal values.
  function runsHeader(text, axis, count) {
    var tr = document.createElement("tr");
    label(tr, text);
    for (var col = 0; col < count;) {
      var span = 1, shown = builds[col].e[axis];
      while (col + span < count && builds[col + span].e[axis] === shown) span++;
      var h = document.createElement("th");
      h.className = span > 1 ? "run" : "run one";
      h.colSpan = span;
      h.textContent = shown;
      h.title = shown + (span > 1 ? " (" + span + " builds)" : "");
      tr.appendChild(h);
      col += span;
    }
    return tr;
  }

  function draw() {
    var wanted = parseInt(document.getElementById("columns").value, 10);
    var count = wanted > 0 ? Math.min(wanted, builds.length) : builds.length;
    var head = document.createElement("thead"), body = document.createElement("tbody");
    head.appendChild(buildHeader(count));
    data.axes.forEach(function (axis, i) { head.appendChild(runsHeader(axis, i, count)); });
    if (builds.slice(0, count).some(function (b) { return b.n; })) head.appendChild(nodeLogsHeader(count));
    if (builds.slice(0, count).some(function (b) { return S[b.ft]; })) head.appendChild(failuresHeader(count));
    body.appendChild(row("Overall", data.overall, count, "overall", "", "", -1));
    rows.forEach(function (r) {
      r.tr = row(r.name, r.runs, count, "", r.engine, r.cluster, r.id);
      body.appendChild(r.tr);
    });
    table.replaceChildren(head, body);
    filter();
  }

  function value(id) {
    var element = document.getElementById(id);
    return element ? element.value : "";
  }

  function filter() {
    var text = value("filter").toLowerCase(), tag = value("filter-tag");
    var tier = value("filter-tier"), category = value("filter-category"), engine = value("filter-engine");
    var shown = 0;
    rows.forEach(function (r) {
      var visible = (!text || r.lower.indexOf(text) >= 0) && (!tag || r.tags.indexOf(tag) >= 0) &&
        (!tier || r.tier === tier) && (!category || r.category === category) && (!engine || r.engine === engine);
      r.tr.hidden = !visible;
      shown += visible ? 1 : 0;
    });
    document.getElementById("shown").textContent = shown + " of " + rows.length + " tests";
  }

  ["filter", "filter-tag", "filter-tier", "filter-category", "filter-engine"].forEach(function (id) {
    var element = document.getElementById(id);
    if (element) element.addEventListener("input", filter);
  });
  document.getElementById("columns").addEventListener("change", draw);
  draw();
})();
