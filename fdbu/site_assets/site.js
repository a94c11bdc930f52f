(function () {
  "use strict";
  var D = window.FDBU;
  var $ = function (id) { return document.getElementById(id); };
  var NS = "http://www.w3.org/2000/svg";

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sv(tag, attrs, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(x) { return x === null || x === undefined ? "n/a" : (typeof x === "string" ? x : x.toFixed(3)); }

  // ---- the leaderboard: one table per subset, systems as columns, sortable by any column
  function sortKey(v) {
    if (v === "not reached") return Infinity;
    return v === null || v === undefined ? NaN : v;
  }
  function sortable(table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var dir = th.getAttribute("data-dir") === "asc" ? "desc" : "asc";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", dir);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-sort"), y = b.cells[col].getAttribute("data-sort");
          var nx = parseFloat(x), ny = parseFloat(y);
          if (isNaN(nx) && isNaN(ny)) return (x < y ? -1 : x > y ? 1 : 0) * (dir === "asc" ? 1 : -1);
          if (isNaN(nx) || isNaN(ny)) return isNaN(nx) ? 1 : -1;  // no value: last either way
          return (nx - ny) * (dir === "asc" ? 1 : -1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }
  function boards() {
    var base = D.board.length ? D.board[0].baseline : "";
    $("legend").textContent = "Values with their 95% intervals from each system's unified.json. Bold: the best " +
      "of the row by the metric's direction. Beside a system: * when fdbu compare marks its paired difference " +
      "against the baseline " + base + " (Holm-adjusted p below alpha; hover for p), green when better, red when " +
      "worse. " +
      "n/r: not reached. Click a column head to sort.";
    D.board.forEach(function (sub) {
      $("boards").appendChild(el("h3", {}, sub.subset + " (" + sub.label + ")"));
      // another benchmark's terms (fdbu score views=): its own tables, each naming its source
      if (sub.view) $("boards").appendChild(el("p", {"class": "hint source"}, "Source: " + sub.source + "."));
      var table = el("table", sub.view ? {"class": "board view", "data-subset": sub.subset, "data-view": sub.view}
                                       : {"class": "board", "data-subset": sub.subset});
      var head = table.createTHead().insertRow();
      head.appendChild(el("th", {}, "metric"));
      head.appendChild(el("th", {}, "better"));
      D.systems.forEach(function (n) { head.appendChild(el("th", {}, n + (n === sub.baseline && D.systems.length > 1 ? " (baseline)" : ""))); });
      var body = table.createTBody();
      sub.rows.forEach(function (row, r) {
        var tr = body.insertRow();
        tr.setAttribute("data-metric", row.metric);
        var name = el("td", {"data-sort": String(r).padStart(3, "0")}, row.label);
        name.title = row.metric;
        tr.appendChild(name);
        tr.appendChild(el("td", {"class": "dir", "data-sort": row.better}, row.better));
        row.cells.forEach(function (c, i) {
          var key = sortKey(c.value);
          var td = el("td", {"data-sort": isNaN(key) ? "" : String(key), "data-system": D.systems[i]});
          if (row.best.indexOf(i) >= 0) td.className = "best";
          td.appendChild(el("span", {"class": "v"}, c.text));
          var d = c.decision;
          if (d && d.mark) {
            var m = el("span", {"class": d.side || "", title: "against " + sub.baseline + ": " + (d.side || "different") +
              (d.p_holm === null || d.p_holm === undefined ? "" : ", Holm p " + d.p_holm.toFixed(3))}, " " + d.mark);
            td.appendChild(m);
          }
          tr.appendChild(td);
        });
      });
      $("boards").appendChild(table);
      var c = sub.counts.map(function (x, i) {
        return D.systems[i] + ": " + Object.keys(x).filter(function (k) { return typeof x[k] === "number"; })
          .map(function (k) { return k + " " + x[k]; }).join(", ");
      }).join(" | ");
      if (sub.counts.some(function (x) { return Object.keys(x).length; })) $("boards").appendChild(el("p", {"class": "hint"}, c));
      sub.counts.forEach(function (x, i) {  // why coverage is below 1: the ineligible samples by reason
        var why = x.ineligible_reasons || {};
        var reasons = Object.keys(why);
        if (!reasons.length) return;
        $("boards").appendChild(el("p", {"class": "hint why", "data-system": D.systems[i]}, D.systems[i] +
          ": coverage below 1, ineligible samples by reason: " +
          reasons.map(function (k) { return k + " (" + why[k] + ")"; }).join("; ")));
      });
      sortable(table);
    });
  }

  // ---- the sample list and its filters
  var state = {system: 0, subset: null, outcome: "all", id: null};
  function options(select, values, chosen) {
    select.innerHTML = "";
    values.forEach(function (v) {
      var o = el("option", {value: v[0]}, v[1]);
      if (String(v[0]) === String(chosen)) o.selected = true;
      select.appendChild(o);
    });
  }
  function subsets(k) {
    var seen = [];
    D.index[k].forEach(function (r) { if (seen.indexOf(r[1]) < 0) seen.push(r[1]); });
    return seen;
  }
  function controls() {
    options($("pick-system"), D.systems.map(function (n, k) { return [k, n]; }), state.system);
    var subs = subsets(state.system);
    if (subs.indexOf(state.subset) < 0) state.subset = subs[0];
    options($("pick-subset"), subs.map(function (s) { return [s, s]; }), state.subset);
    var outs = [];
    D.index[state.system].forEach(function (r) { if (r[1] === state.subset && outs.indexOf(r[2]) < 0) outs.push(r[2]); });
    if (outs.indexOf(state.outcome) < 0) state.outcome = "all";
    options($("pick-outcome"), [["all", "all"]].concat(outs.map(function (o) { return [o, o]; })), state.outcome);
    list();
  }
  function list() {
    var ol = $("sample-list");
    ol.innerHTML = "";
    var n = 0;
    D.index[state.system].forEach(function (r) {
      if (r[1] !== state.subset || (state.outcome !== "all" && r[2] !== state.outcome)) return;
      var li = el("li", {"data-id": r[0], "data-outcome": r[2]});
      li.appendChild(el("span", {}, r[0].slice(r[1].length + 1) || r[0]));
      li.appendChild(el("span", {"class": "o"}, r[2]));
      if (r[0] === state.id) li.className = "on";
      li.addEventListener("click", function () { location.hash = "sample=" + state.system + "/" + r[0]; });
      ol.appendChild(li);
      n++;
    });
    $("count").textContent = n + " samples";
  }
  ["pick-system", "pick-subset", "pick-outcome"].forEach(function (id) {
    $(id).addEventListener("change", function () {
      if (id === "pick-system") state.system = parseInt($(id).value, 10);
      if (id === "pick-subset") state.subset = $(id).value;
      if (id === "pick-outcome") state.outcome = $(id).value;
      controls();
    });
  });

  // ---- the drill-down: the system's samples-K.js is loaded on first use
  var loading = {};
  function load(k, then) {
    if (window.FDBU_SAMPLES && window.FDBU_SAMPLES[k]) { then(); return; }
    if (loading[k]) { loading[k].push(then); return; }
    loading[k] = [then];
    var s = document.createElement("script");
    s.src = "samples-" + k + ".js";
    s.onload = function () { var w = loading[k]; delete loading[k]; w.forEach(function (f) { f(); }); };
    s.onerror = function () { $("drilldown").textContent = "cannot load samples-" + k + ".js beside this page"; };
    document.head.appendChild(s);
  }
  var byId = {};
  function find(k, id) {
    if (!byId[k]) { byId[k] = {}; window.FDBU_SAMPLES[k].forEach(function (d) { byId[k][d.id] = d; }); }
    return byId[k][id];
  }
  function open(k, id) {
    state.system = k; state.id = id;
    var entry = D.index[k].filter(function (r) { return r[0] === id; })[0];
    if (!entry) { $("drilldown").textContent = id + " is not a sample of " + D.systems[k]; return; }
    if (state.subset !== entry[1]) { state.subset = entry[1]; state.outcome = "all"; }
    if (state.outcome !== "all" && state.outcome !== entry[2]) state.outcome = "all";
    controls();
    load(k, function () { render(k, find(k, id)); });
  }
  function wave(g, peaks, x0, w, y, h, color) {
    var mid = y + h / 2, step = w / peaks.length, d = "";
    peaks.forEach(function (p, i) {
      var a = p / 99 * h / 2;
      d += "M" + (x0 + i * step).toFixed(1) + " " + (mid - a).toFixed(1) + "v" + Math.max(0.5, 2 * a).toFixed(1);
    });
    g.appendChild(sv("path", {d: d, stroke: color, "stroke-width": Math.max(1, step * 0.8).toFixed(1)}));
  }
  function render(k, d) {
    var box = $("drilldown");
    box.innerHTML = "";
    box.appendChild(el("h3", {}, D.systems[k] + ": " + d.id));
    box.appendChild(el("p", {"class": "rule", id: "rule"}, d.rule));
    var others = el("p", {"class": "others"}, "same sample in: ");
    D.systems.forEach(function (n, j) {
      if (j === k) return;
      var has = D.index[j].some(function (r) { return r[0] === d.id; });
      if (has) others.appendChild(el("a", {href: "#sample=" + j + "/" + d.id}, n));
    });
    if (D.systems.length > 1) box.appendChild(others);
    var audio = el("p");
    ["input", "output"].forEach(function (side) {
      if (!d[side]) return;
      audio.appendChild(document.createTextNode(side + " "));
      audio.appendChild(el("audio", {controls: "", preload: "none", src: d[side].src}));
    });
    (d.runs || []).forEach(function (r) {  // the task's other runs (v1.5: the clean run)
      if (!r.src) return;
      audio.appendChild(document.createTextNode(r.name + " "));
      audio.appendChild(el("audio", {controls: "", preload: "none", src: r.src}));
    });
    if (!d.input && d.output) audio.appendChild(el("span", {"class": "hint"}, "(no input.wav in the tree)"));
    box.appendChild(audio);
    if (d.T) box.appendChild(timeline(d));
    var det = el("details");
    det.appendChild(el("summary", {}, "the row in unified-samples.jsonl"));
    det.appendChild(el("pre", {"class": "sig"}, JSON.stringify(d.row, null, 1)));
    box.appendChild(det);
    box.scrollIntoView({block: "nearest"});
  }
  function timeline(d) {
    var W = 1000, L = (d.runs || []).length ? 115 : 70, R = 10, w = W - L - R, T = d.T, y = 24, lanes = [];
    var x = function (t) { return L + t / T * w; };
    if (d.input) lanes.push(["input", 50]);
    if (d.output) lanes.push(["output", 70]);
    if (d.segments) lanes.push(["speech", 18]);
    lanes.push(["words", 42]);
    (d.runs || []).forEach(function (r) {  // another run of the same sample, on the same clock
      if (r.peaks) lanes.push([r.name, 70, r]);
      if (r.segments) lanes.push([r.name + " speech", 18, r]);
      lanes.push([r.name + " words", 42, r]);
    });
    var H = y + lanes.reduce(function (a, l) { return a + l[1] + 6; }, 0) + 22;
    var svg = sv("svg", {viewBox: "0 0 " + W + " " + H, id: "timeline"});
    var marks = d.marks || {};
    (marks.pauses || []).forEach(function (p) {
      svg.appendChild(sv("rect", {x: x(p[0]), y: y - 4, width: Math.max(1, x(p[1]) - x(p[0])), height: H - y - 18,
        fill: "#ffe9b0", "class": "pause"}));
    });
    if (marks.event) {  // the overlap event's window, shaded across every lane (v1.5)
      var ev = sv("rect", {x: x(marks.event[0]), y: y - 4, width: Math.max(1, x(marks.event[1]) - x(marks.event[0])),
        height: H - y - 18, fill: "#f6d5d0", "class": "event"});
      ev.appendChild(sv("title", {}, "overlap event " + fmt(marks.event[0]) + "-" + fmt(marks.event[1]) + " s"));
      svg.appendChild(ev);
    }
    var top = y;
    lanes.forEach(function (l) {
      var run = l[2];
      svg.appendChild(sv("text", {x: 4, y: top + l[1] / 2 + 4, "font-size": run ? 10 : 12, fill: "#444"}, l[0]));
      if (run) {
        if (l[0] === run.name) wave(svg, run.peaks, L, w, top, l[1], "#7a4fb0");
        else if (l[0] === run.name + " speech") segs(svg, run.segments, top, l[1], "#8e6bbf");
        else wordLane(svg, run.words, top);
        top += l[1] + 6;
        return;
      }
      if (l[0] === "input" || l[0] === "output") wave(svg, d[l[0]].peaks, L, w, top, l[1], l[0] === "input" ? "#8a8fa8" : "#3358c4");
      if (l[0] === "speech") segs(svg, d.segments, top, l[1], "#2e9e5b");
      if (l[0] === "words") wordLane(svg, d.words, top);
      top += l[1] + 6;
    });
    for (var t = 0; t <= T; t += T > 30 ? 5 : T > 10 ? 2 : 1) {
      svg.appendChild(sv("line", {x1: x(t), x2: x(t), y1: H - 20, y2: H - 16, stroke: "#666"}));
      svg.appendChild(sv("text", {x: x(t), y: H - 4, "font-size": 11, "text-anchor": "middle", fill: "#444"}, t + " s"));
    }
    function segs(svg, list, top, h, colour) {
      list.forEach(function (s) {
        var r = sv("rect", {x: x(s[0]), y: top + 2, width: Math.max(1, x(s[1]) - x(s[0])), height: h - 4, fill: colour, "class": "segment"});
        r.appendChild(sv("title", {}, "speech " + fmt(s[0]) + "-" + fmt(s[1]) + " s"));
        svg.appendChild(r);
      });
    }
    function wordLane(svg, list, top) {
      list.forEach(function (wd, i) {
        var yy = top + (i % 2) * 20;
        var r = sv("rect", {x: x(wd[0]), y: yy + 2, width: Math.max(1.5, x(wd[1]) - x(wd[0])), height: 16, fill: "#d8def5", stroke: "#7f8fc9", "class": "word"});
        r.appendChild(sv("title", {}, wd[2] + " " + fmt(wd[0]) + "-" + fmt(wd[1]) + " s"));
        svg.appendChild(r);
        svg.appendChild(sv("text", {x: x(wd[0]) + 2, y: yy + 14, "font-size": 11}, wd[2]));
      });
    }
    var labelEnd = -Infinity;  // the marks' labels left to right, each moved right past the one before
    Object.keys(marks).filter(function (m) { return typeof marks[m] === "number"; })
      .sort(function (a, b) { return marks[a] - marks[b]; }).forEach(function (m) {  // E, S, R, o_s, o_e, ...
      svg.appendChild(sv("line", {x1: x(marks[m]), x2: x(marks[m]), y1: 14, y2: H - 20, stroke: "#c0392b", "stroke-width": 1.5, "class": "mark"}));
      var text = m + " = " + fmt(marks[m]) + " s", at = Math.max(x(marks[m]) + 3, labelEnd + 8);
      var label = sv("text", {x: at, y: 13, "font-size": 12, fill: "#c0392b", "class": "mark-label"}, text);
      svg.appendChild(label);
      labelEnd = at + text.length * 7;  // 12 px text: at most 7 px a character
    });
    return svg;
  }
  function route() {
    var m = /^#sample=(\d+)\/(.+)$/.exec(location.hash);
    if (m) open(parseInt(m[1], 10), decodeURIComponent(m[2]));
  }
  window.addEventListener("hashchange", route);

  // ---- figures, signatures, links
  function rest() {
    D.figures.forEach(function (f) {
      var fig = el("figure");
      fig.appendChild(el("img", {src: f, alt: f}));
      var cap = el("figcaption");
      cap.appendChild(el("a", {href: f}, f));
      var pdf = f.replace(/\.png$/, ".pdf");
      cap.appendChild(document.createTextNode(" "));
      cap.appendChild(el("a", {href: pdf}, pdf));
      fig.appendChild(cap);
      $("figure-list").appendChild(fig);
    });
    if (!D.figures.length) $("figure-list").appendChild(el("p", {"class": "hint"}, "no figures (plot=false)"));
    Object.keys(D.links).forEach(function (k) {
      $("links").appendChild(el("a", {href: D.links[k], style: "margin-right:16px"}, k));
    });
    D.signatures.forEach(function (s) {
      $("signature-list").appendChild(el("h3", {}, s.name));
      $("signature-list").appendChild(el("pre", {"class": "sig"}, JSON.stringify(s, null, 1)));
    });
  }

  boards();
  state.subset = subsets(0)[0];
  controls();
  rest();
  route();
})();
