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
  // a name that may wrap in a narrow column after its underscores (a <wbr> after each), not inside a word: the
  // column's overflow-wrap only breaks a part that is wider than the column by itself
  function breakable(e, text) {
    text.split("_").forEach(function (part, i, parts) {
      e.appendChild(document.createTextNode(part + (i < parts.length - 1 ? "_" : "")));
      if (i < parts.length - 1) e.appendChild(document.createElement("wbr"));
    });
    return e;
  }
  function sv(tag, attrs, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(x) { return x === null || x === undefined ? "n/a" : (typeof x === "string" ? x : x.toFixed(3)); }

  // ---- the leaderboard: a summary (systems as rows, ranked), then one table per subset (systems as columns);
  // every column head is a button that sorts its table's rows
  function sortKey(v) {
    if (v === "not reached") return Infinity;
    return v === null || v === undefined ? NaN : v;
  }
  function sortable(table) {
    var heads = table.tHead.rows[table.tHead.rows.length - 1].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      var b = el("button", {type: "button", "class": "sort"});
      while (th.firstChild) b.appendChild(th.firstChild);
      th.appendChild(b);
      b.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows).filter(function (r) { return !r.classList.contains("reference"); });
        var fixed = Array.prototype.slice.call(body.rows).filter(function (r) { return r.classList.contains("reference"); });
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-sort"), y = b.cells[col].getAttribute("data-sort");
          var nx = parseFloat(x), ny = parseFloat(y);
          if (isNaN(nx) && isNaN(ny)) return (x < y ? -1 : x > y ? 1 : 0) * (dir === "ascending" ? 1 : -1);
          if (isNaN(nx) || isNaN(ny)) return isNaN(nx) ? 1 : -1;  // no value: last either way
          return (nx - ny) * (dir === "ascending" ? 1 : -1);
        });
        rows.concat(fixed).forEach(function (r) { body.appendChild(r); });  // the official rules' row stays last
      });
    });
  }
  var SIDE = {better: "\u25b2 better", worse: "\u25bc worse"};  // told by a symbol and a word, not colour alone
  // a cell's decision against the baseline: a button showing the mark (symbol and word) and the Holm p; it opens
  // the line's paired details (n, b - a with its interval, raw and Holm p)
  function decisionButton(td, c, base, system, markedOnly) {
    var d = c.decision, pd = c.paired;
    if (!pd || (markedOnly && !(d && d.mark))) return;
    var label = d && d.mark ? "* " + (SIDE[d.side] || "different") : "paired";
    if (d && d.p_holm_text) label += " \u00b7 Holm p " + d.p_holm_text;
    var b = el("button", {type: "button", "class": "pd" + (d && d.mark ? " mark " + (d.side || "") : ""),
                          "aria-expanded": "false"}, label);
    var box = el("div", {"class": "paired", hidden: ""});
    // every number as Python printed it (one formatter per kind for the console, md, tex, csv and this page)
    box.textContent = system + " \u2212 " + base + " on " + (pd.n === null || pd.n === undefined ? "n/a" : pd.n) +
      " paired samples: " + pd.text.difference + "; raw p " + pd.text.p + "; Holm p " +
      (d && d.p_holm_text ? d.p_holm_text : "n/a (" + (d && d.reason ? d.reason : "not in the Holm family") + ")");
    b.addEventListener("click", function () {
      var open = box.hasAttribute("hidden");
      if (open) box.removeAttribute("hidden"); else box.setAttribute("hidden", "");
      b.setAttribute("aria-expanded", String(open));
    });
    td.appendChild(document.createTextNode(" "));
    td.appendChild(b);
    td.appendChild(box);
  }
  function valueCell(c, best, system, base, markedOnly) {
    var key = sortKey(c.value);
    var td = el("td", {"data-sort": isNaN(key) ? "" : String(key), "data-system": system});
    if (best) td.className = "best";
    td.appendChild(el("span", {"class": "v"}, c.text));
    if (best) td.appendChild(el("span", {"class": "sr"}, " (best)"));
    decisionButton(td, c, base, system, markedOnly);
    return td;
  }
  function boxed(table, label) {  // a table scrolls inside its own box on a narrow screen, the page does not; the
    // box takes focus, so arrow keys scroll it
    var box = el("div", {"class": "scroll", tabindex: "0", role: "region", "aria-label": label || "table"});
    box.appendChild(table);
    return box;
  }
  function summaryTable() {
    var S = D.summary;
    if (!S || !S.columns.length) return;
    $("boards").appendChild(el("h3", {id: "summary-head"}, "Summary: headline metrics"));
    $("boards").appendChild(el("p", {"class": "hint"}, "Systems " + S.rule + "."));
    if (S.family) $("boards").appendChild(el("p", {"class": "hint family"}, "Marks: " + S.family + "."));
    var table = el("table", {"class": "board summary", "data-subset": "summary", "aria-labelledby": "summary-head"});
    var thead = table.createTHead();
    var groups = thead.insertRow(), head = thead.insertRow();
    groups.appendChild(el("th", {colspan: "3"}, ""));
    S.columns.forEach(function (c, j) {
      if (j && S.columns[j - 1].subset === c.subset) { groups.lastChild.colSpan += 1; return; }
      groups.appendChild(breakable(el("th", {"class": "group"}), c.subset));
    });
    ["place", "system", "mean rank"].forEach(function (t) { head.appendChild(el("th", {scope: "col"}, t)); });
    S.columns.forEach(function (c) {
      head.appendChild(el("th", {scope: "col", "data-metric": c.metric, "data-subset": c.subset},
        c.label + " (" + c.better + " is better)"));
    });
    var body = table.createTBody();
    S.rows.forEach(function (r) {
      var tr = body.insertRow();
      tr.setAttribute("data-system", r.system);
      tr.appendChild(el("td", {"data-sort": String(r.place)}, String(r.place)));
      tr.appendChild(el("th", {scope: "row", "data-sort": r.system}, r.system + (r.system === S.baseline && D.systems.length > 1 ? " (baseline)" : "")));
      tr.appendChild(el("td", {"data-sort": String(r.mean_rank)}, r.mean_rank_text));
      r.cells.forEach(function (c, j) {
        var cc = {value: c.value, text: c.value_text, decision: c.decision, paired: c.paired};
        tr.appendChild(valueCell(cc, r.best[j], r.system, S.baseline, true));  // compact: the marks only
      });
    });
    $("boards").appendChild(boxed(table, "summary"));
    sortable(table);
  }
  function boards() {
    var base = D.board.length ? D.board[0].baseline : "";
    $("legend").textContent = "Values with their 95% intervals from each system's unified.json, each on that " +
      "system's own samples. Bold and (best): the best of the row by the metric's direction. Beside a system: " +
      "\u201c* \u25b2 better\u201d or \u201c* \u25bc worse\u201d when fdbu compare marks its paired difference " +
      "against the baseline " + base + " (Holm-adjusted p below alpha" +
      (D.board.length && D.board[0].family ? "; " + D.board[0].family : "") +
      "), with the Holm p; the mark is decided on " +
      "the paired samples, those both systems have in the metric's population. Press a mark (or \u201cpaired\u201d) " +
      "for the paired n, the difference with its interval and the raw and Holm p. n/r: not reached. " +
      "Official rules: the Full-Duplex-Bench scripts' numbers from each tree's summary.json (fdbu evaluate), for " +
      "reference. Press a column head to sort its table.";
    summaryTable();
    D.board.forEach(function (sub) {
      $("boards").appendChild(el("h3", {}, sub.subset + " (" + sub.label + ")"));
      // another benchmark's terms (fdbu score views=): its own tables, each naming its source
      if (sub.view) $("boards").appendChild(el("p", {"class": "hint source"}, "Source: " + sub.source + "."));
      if (sub.note) $("boards").appendChild(el("p", {"class": "hint note"}, sub.note + "."));
      var table = el("table", sub.view ? {"class": "board view", "data-subset": sub.subset, "data-view": sub.view}
                                       : {"class": "board", "data-subset": sub.subset});
      var head = table.createTHead().insertRow();
      head.appendChild(el("th", {scope: "col"}, "metric"));
      head.appendChild(el("th", {scope: "col"}, "better"));
      D.systems.forEach(function (n) { head.appendChild(el("th", {scope: "col"}, n + (n === sub.baseline && D.systems.length > 1 ? " (baseline)" : ""))); });
      var body = table.createTBody();
      sub.rows.forEach(function (row, r) {
        var tr = body.insertRow();
        tr.setAttribute("data-metric", row.metric);
        var name = el("th", {scope: "row", "data-sort": String(r).padStart(3, "0")}, row.label);
        name.title = row.metric;
        tr.appendChild(name);
        tr.appendChild(el("td", {"class": "dir", "data-sort": row.better}, row.better));
        row.cells.forEach(function (c, i) { tr.appendChild(valueCell(c, row.best.indexOf(i) >= 0, D.systems[i], sub.baseline)); });
      });
      if (sub.reference) {  // the official rules' numbers (summary.json), for reference, always the last row
        var tr = body.insertRow();
        tr.className = "reference";
        tr.appendChild(el("th", {scope: "row", "data-sort": "999"}, "official rules (summary.json)"));
        tr.appendChild(el("td", {"class": "dir", "data-sort": "reference"}, "reference"));
        sub.reference.forEach(function (r, i) {
          tr.appendChild(el("td", {"class": "ref" + (r.note ? " none" : ""), "data-system": D.systems[i], "data-sort": ""}, r.text));
        });
      }
      $("boards").appendChild(boxed(table, sub.subset + (sub.view ? " (" + sub.view + ")" : "")));
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
      var a = el("a", {href: "#sample=" + state.system + "/" + encodeURIComponent(r[0])});  // a link: focus and Enter
      a.appendChild(el("span", {}, r[0].slice(r[1].length + 1) || r[0]));
      a.appendChild(el("span", {"class": "o"}, r[2]));
      li.appendChild(a);
      if (r[0] === state.id) { li.className = "on"; a.setAttribute("aria-current", "true"); }
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

  // ---- the drill-down: the part of the system's drill-downs holding the sample (samples-K-C.js) loads on first use
  var loading = {};
  function position(k, id) {  // where the sample is in its system's index (-1: not there)
    for (var i = 0; i < D.index[k].length; i++) if (D.index[k][i][0] === id) return i;
    return -1;
  }
  function load(k, i, then) {  // i: the sample's position (position(k, id))
    var key = k + "-" + Math.floor(i / D.chunk);
    if (window.FDBU_SAMPLES && window.FDBU_SAMPLES[key]) { then(); return; }
    if (loading[key]) { loading[key].push(then); return; }
    loading[key] = [then];
    var s = document.createElement("script");
    s.src = "samples-" + key + ".js";
    s.onload = function () { var w = loading[key]; delete loading[key]; w.forEach(function (f) { f(); }); };
    s.onerror = function () { $("drilldown").textContent = "cannot load samples-" + key + ".js beside this page"; };
    document.head.appendChild(s);
  }
  function find(k, i) {
    return window.FDBU_SAMPLES[k + "-" + Math.floor(i / D.chunk)][i % D.chunk];
  }
  function open(k, id) {
    state.system = k; state.id = id;
    var i = position(k, id), entry = D.index[k][i];
    if (!entry) { $("drilldown").textContent = id + " is not a sample of " + D.systems[k]; return; }
    if (state.subset !== entry[1]) { state.subset = entry[1]; state.outcome = "all"; }
    if (state.outcome !== "all" && state.outcome !== entry[2]) state.outcome = "all";
    controls();
    load(k, i, function () { if (state.system === k && state.id === id) render(k, find(k, i)); });
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
      if (has) others.appendChild(el("a", {href: "#sample=" + j + "/" + encodeURIComponent(d.id)}, n));
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
    var inputRun = (d.runs || []).some(function (r) { return r.name === "input"; });  // v2: the examiner's lanes
    if (!d.input && !inputRun && d.output) audio.appendChild(el("span", {"class": "hint"}, "(no input.wav in the tree)"));
    box.appendChild(audio);
    if (d.T) {  // on a phone the timeline keeps its size and scrolls in its box
      var line = timeline(d);
      line.id = "timeline";
      box.appendChild(boxed(line, "timeline"));
    }
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
    var svg = sv("svg", {viewBox: "0 0 " + W + " " + H, "class": "timeline"});
    var marks = d.marks || {};
    (marks.pauses || []).forEach(function (p) {
      svg.appendChild(sv("rect", {x: x(p[0]), y: y - 4, width: Math.max(1, x(p[1]) - x(p[0])), height: H - y - 18,
        fill: "#ffe9b0", "class": "pause"}));
    });
    (marks.windows || []).forEach(function (w) {  // windows with what they are (v2: each judged event)
      var r = sv("rect", {x: x(w[0]), y: y - 4, width: Math.max(1, x(w[1]) - x(w[0])), height: H - y - 18,
        fill: "#e3f0d8", stroke: "#9fc48a", "class": "window"});
      r.appendChild(sv("title", {}, w[2]));
      svg.appendChild(r);
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
      // two rows; a word goes in the first whose last label ends before it, its label drawn only there (11 px
      // text: at most 7 px a character), so no two labels overlap; a word with no room shows its text on hover
      var ends = [-Infinity, -Infinity], labels = [];
      list.forEach(function (wd, i) {
        var at = x(wd[0]), row = ends[0] <= at ? 0 : ends[1] <= at ? 1 : -1;
        var yy = top + (row < 0 ? i % 2 : row) * 20;
        var r = sv("rect", {x: at, y: yy + 2, width: Math.max(1.5, x(wd[1]) - at), height: 16, fill: "#d8def5", stroke: "#7f8fc9", "class": "word"});
        r.appendChild(sv("title", {}, wd[2] + " " + fmt(wd[0]) + "-" + fmt(wd[1]) + " s"));
        svg.appendChild(r);
        if (row < 0) return;
        labels.push(sv("text", {x: at + 2, y: yy + 14, "font-size": 11, "class": "word-label"}, wd[2]));
        ends[row] = at + 2 + wd[2].length * 7 + 3;
      });
      labels.forEach(function (t) { svg.appendChild(t); });  // over every word's box
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
  // ---- across systems: each sample's outcome in every system side by side, its timelines stacked
  var across = {subset: null, search: "", disagree: false, sort: "id"};
  function acrossRows() {
    var by = {};
    D.index.forEach(function (idx, k) {
      idx.forEach(function (r) {
        if (r[1] !== across.subset) return;
        (by[r[0]] = by[r[0]] || {id: r[0], entries: []}).entries[k] = r;
      });
    });
    return Object.keys(by).map(function (id) { return by[id]; });
  }
  function shown(r) { return r.length > 4 ? r[4] : r[2]; }  // a session's counts (v2), else the outcome
  function differs(row) {  // among the systems that have the sample (one without it is not a disagreement)
    var seen = {};
    D.systems.forEach(function (n, k) { if (row.entries[k]) seen[shown(row.entries[k])] = 1; });
    return Object.keys(seen).length > 1;
  }
  function acrossControls() {
    var subs = [];
    D.index.forEach(function (idx) { idx.forEach(function (r) { if (subs.indexOf(r[1]) < 0) subs.push(r[1]); }); });
    if (subs.indexOf(across.subset) < 0) across.subset = subs[0];
    options($("across-subset"), subs.map(function (s) { return [s, s]; }), across.subset);
    var times = [];
    acrossRows().forEach(function (row) {
      row.entries.forEach(function (r) { Object.keys((r && r[3]) || {}).forEach(function (t) { if (times.indexOf(t) < 0) times.push(t); }); });
    });
    var sorts = [["id", "sample id"]];
    times.forEach(function (t) { D.systems.forEach(function (n, k) { sorts.push([t + "/" + k, t + " of " + n]); }); });
    if (!sorts.some(function (o) { return o[0] === across.sort; })) across.sort = "id";
    options($("across-sort"), sorts, across.sort);
    acrossTable();
  }
  function acrossTable() {
    var rows = acrossRows().filter(function (row) {
      return (!across.disagree || differs(row)) && row.id.toLowerCase().indexOf(across.search.toLowerCase()) >= 0;
    });
    var key = across.sort.split("/");
    rows.sort(function (a, b) {
      if (key[0] === "id") return a.id.localeCompare(b.id, undefined, {numeric: true});
      var ea = a.entries[+key[1]], eb = b.entries[+key[1]];
      var x = ea && ea[3][key[0]], y = eb && eb[3][key[0]];
      x = typeof x === "number" ? x : Infinity; y = typeof y === "number" ? y : Infinity;  // none: last
      return x - y || a.id.localeCompare(b.id, undefined, {numeric: true});
    });
    var table = el("table", {"class": "board across"});
    var head = table.createTHead().insertRow();
    head.appendChild(el("th", {scope: "col"}, "sample"));
    D.systems.forEach(function (n) { head.appendChild(el("th", {scope: "col"}, n)); });
    var body = table.createTBody();
    rows.forEach(function (row) {
      var tr = body.insertRow();
      tr.setAttribute("data-id", row.id);
      if (differs(row)) tr.className = "differs";
      var th = el("th", {scope: "row"});
      th.appendChild(el("a", {href: "#across=" + encodeURIComponent(row.id)}, row.id.slice(across.subset.length + 1)));
      tr.appendChild(th);
      D.systems.forEach(function (n, k) {
        var r = row.entries[k];
        var t = r ? Object.keys(r[3]).map(function (q) { return q + " " + fmt(r[3][q]); }).join(", ") : "";
        tr.appendChild(el("td", {"data-system": n}, r ? shown(r) + (t ? " (" + t + ")" : "") : "(not in this tree)"));
      });
    });
    $("across-table").innerHTML = "";
    $("across-table").appendChild(table);
    $("across-count").textContent = rows.length + " samples" + (across.disagree ? " where outcomes differ" : "");
  }
  [["across-subset", "change"], ["across-search", "input"], ["across-disagree", "change"], ["across-sort", "change"]].forEach(function (c) {
    $(c[0]).addEventListener(c[1], function () {
      across.subset = $("across-subset").value; across.search = $("across-search").value;
      across.disagree = $("across-disagree").checked; across.sort = $("across-sort").value;
      acrossControls();
    });
  });
  function openAcross(id) {
    var subset = id.split("/")[0];
    if (across.subset !== subset) { across.subset = subset; acrossControls(); }
    var box = $("across-detail");
    box.innerHTML = "";
    box.removeAttribute("data-ready");
    var token = {};  // a later open wins: an earlier one's late loads add nothing
    box.token = token;
    box.appendChild(el("h3", {}, id + " in every system"));
    var ks = D.systems.map(function (n, k) { return k; });
    var shown = 0;
    ks.forEach(function (k) {
      var part = el("div", {"class": "across-system", "data-system": D.systems[k]});
      box.appendChild(part);
      var i = position(k, id), has = i >= 0;
      if (!has) { part.appendChild(el("h4", {}, D.systems[k] + ": not in this tree")); done(); return; }
      load(k, i, function () {
        if (box.token !== token) return;
        var d = find(k, i);
        part.appendChild(el("h4", {}, D.systems[k] + ": " + d.outcome));
        part.appendChild(el("p", {"class": "rule"}, d.rule));
        if (d.T) part.appendChild(boxed(timeline(d), D.systems[k] + " timeline"));
        part.appendChild(el("a", {href: "#sample=" + k + "/" + encodeURIComponent(id)}, "open in Samples"));
        done();
      });
    });
    function done() { shown++; if (shown === ks.length) box.setAttribute("data-ready", "true"); }
    box.scrollIntoView({block: "nearest"});
  }

  function route() {
    var m = /^#sample=(\d+)\/(.+)$/.exec(location.hash);
    if (m) open(parseInt(m[1], 10), decodeURIComponent(m[2]));
    var a = /^#across=(.+)$/.exec(location.hash);
    if (a) openAcross(decodeURIComponent(a[1]));
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
  if (D.systems.length > 1) acrossControls();
  else { $("across").hidden = true; document.querySelector("a[href='#across']").hidden = true; }
  rest();
  route();
})();
