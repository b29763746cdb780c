/*
 * The interactive timeline of earlc's HTML report: a canvas drawing of the data
 * written by earlc/export/timeline_page.py (levels of detail computed in C when
 * the page was written).  Self-contained: no library, no network.
 *
 *   wheel        zoom around the pointer        drag     pan
 *   + / -        zoom in / out                  <- / ->  pan
 *   Home / 0     the whole run                  click    details (and the
 *                                                        partner of a wait state)
 *
 * Rows are grouped by process; a click on a process's triangle folds its
 * threads.  Each row shows the activity that dominates each pixel (from the
 * coarsest level whose bins are no wider than a pixel), or, once few enough
 * region instances are in view and the page holds them, the instances
 * themselves, innermost drawn last; under it a strip with the wait states at
 * least a pixel wide.  Messages are lines, bundled per pair of rows where they
 * crowd.  window.earlcTimeline exposes the view for tests and scripts.
 */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("earlc-timeline-data").textContent);
  var root = document.getElementById("earlc-timeline");
  if (!root) return;

  // ---- data ---------------------------------------------------------------------------
  function bytes(s) {
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  function arr(s, T) {
    if (!s) return new T(0);
    var b = bytes(s);
    return new T(b.buffer, 0, b.length / T.BYTES_PER_ELEMENT);
  }
  var SPAN = Math.max(D.span, 1), RES = D.resolution;
  var rows = D.rows, nRows = rows.length;
  var act = D.activities, idleId = 254;
  var colourOf = {};
  act.forEach(function (a, k) { colourOf[a.id !== undefined ? a.id : k] = a.colour; });
  var paths = D.callpaths.paths, pathAct = arr(D.callpaths.activity, Uint8Array);

  var ex = D.exact;
  var X = {row: arr(ex.row, Uint32Array), start: arr(ex.start, Float64Array),
           end: arr(ex.end, Float64Array), cp: arr(ex.callpath, Int32Array),
           depth: arr(ex.depth, Uint8Array), enter: arr(ex.enter, Uint32Array)};
  // the instances come sorted by (row, depth, start); those of one row and depth
  // are disjoint, so their ends are sorted too: slices[r] lists [first, end) per
  // depth, outermost first
  var slices = [];
  for (var r0 = 0; r0 < nRows; r0++) slices.push([]);
  (function () {
    for (var i = 0; i < X.row.length; i++) {
      var s = slices[X.row[i]], last = s[s.length - 1];
      if (!last || X.depth[last[1] - 1] !== X.depth[i]) s.push([i, i + 1]); else last[1] = i + 1;
    }
  })();
  var levels = D.levels.map(function (L) {
    var runs = arr(L.runs, Uint32Array), vals = arr(L.values, Uint8Array), raw = bytes(L.lengths);
    var starts = [], values = [], pos = 0, k = 0;
    for (var r = 0; r < runs.length; r++) {
      var n = runs[r], s = new Float64Array(n + 1), v = vals.subarray(k, k + n), b = 0;
      for (var j = 0; j < n; j++) {
        var x = 0, shift = 0, c;
        do { c = raw[pos++]; x += (c & 127) * Math.pow(2, shift); shift += 7; } while (c & 128);
        s[j] = b; b += x;
      }
      s[n] = b;
      starts.push(s); values.push(v); k += n;
    }
    return {bins: L.bins, starts: starts, values: values};
  });

  var M = D.messages;
  var msg = {src: arr(M.src, Uint32Array), dst: arr(M.dst, Uint32Array),
             send: arr(M.send, Float64Array), recv: arr(M.recv, Float64Array)};
  var bundles = M.levels.map(function (L) {
    return {bins: L.bins, src: arr(L.src, Uint32Array), dst: arr(L.dst, Uint32Array),
            count: arr(L.count, Uint32Array), send: arr(L.send, Float64Array),
            recv: arr(L.recv, Float64Array), latency: L.latency};
  });
  var msgLatency = 0;
  for (var i = 0; i < msg.send.length; i++) msgLatency = Math.max(msgLatency, msg.recv[i] - msg.send[i]);

  var WD = D.waits, W = {prop: arr(WD.prop, Uint8Array), row: arr(WD.row, Uint32Array),
    start: arr(WD.start, Float64Array), end: arr(WD.end, Float64Array),
    sev: arr(WD.severity, Float64Array), where: arr(WD.where, Uint32Array),
    cp: arr(WD.callpath, Int32Array), prow: arr(WD.partner_row, Int32Array),
    ptime: arr(WD.partner_time, Float64Array), pcp: arr(WD.partner_callpath, Int32Array)};
  var wLong = 0;
  for (i = 0; i < W.start.length; i++) wLong = Math.max(wLong, W.end[i] - W.start[i]);

  var MA = D.matches, match = null;
  if (MA) match = {cols: MA.columns.length, row: arr(MA.row, Uint32Array),
                   time: arr(MA.time, Float64Array), event: arr(MA.event, Uint32Array)};

  var series = D.series.map(function (S) {
    return {metric: S.metric, row: S.row, time: arr(S.time, Float64Array),
            value: arr(S.value, Float64Array)};
  });
  var metrics = [];
  series.forEach(function (S) { if (metrics.indexOf(S.metric) < 0) metrics.push(S.metric); });

  // ---- layout -----------------------------------------------------------------------------
  var canvas = root.querySelector(".tl-canvas"), axis = root.querySelector(".tl-axis");
  var tip = root.querySelector(".tl-tip"), details = root.querySelector(".tl-details");
  var spanText = root.querySelector(".tl-span"), seriesBox = root.querySelector(".tl-series");
  var BUNDLE_PX = 24, GUTTER = 150, ROW_H = nRows > 48 ? 14 : 24, BAND = [0.08, 0.68], STRIP = [0.72, 0.94];
  var folded = {}, groups = [];
  rows.forEach(function (r, k) {
    var g = groups.length ? groups[groups.length - 1] : null;
    if (!g || g.name !== r.group) groups.push(g = {name: r.group, rows: []});
    g.rows.push(k);
  });
  if (nRows > 64) groups.forEach(function (g) { if (g.rows.length > 1) folded[g.name] = true; });
  var shown = [];  // visible rows, in drawing order
  function relayout() {
    shown = [];
    groups.forEach(function (g) {
      g.rows.forEach(function (r, k) { if (k === 0 || !folded[g.name]) shown.push(r); });
    });
    var dpr = window.devicePixelRatio || 1;
    var w = Math.max(root.clientWidth - 2, 400), h = shown.length * ROW_H + 4;
    [[canvas, h], [axis, 28]].forEach(function (ch) {
      ch[0].width = Math.round(w * dpr); ch[0].height = Math.round(ch[1] * dpr);
      ch[0].style.width = w + "px"; ch[0].style.height = ch[1] + "px";
      ch[0].getContext("2d").setTransform(dpr, 0, 0, dpr, 0, 0);
    });
    seriesCanvases.forEach(function (c) {
      c.width = Math.round(w * dpr); c.height = Math.round(90 * dpr);
      c.style.width = w + "px"; c.style.height = "90px";
      c.getContext("2d").setTransform(dpr, 0, 0, dpr, 0, 0);
    });
    width = w;
  }
  var width = 800;
  var seriesCanvases = metrics.map(function (m) {
    var c = document.createElement("canvas");
    c.className = "tl-series-canvas";
    c.title = m;
    seriesBox.appendChild(c);
    return c;
  });

  // ---- the view ------------------------------------------------------------------------------
  var view = {a: 0, b: SPAN};
  var selected = null;          // {kind: "wait"|"interval"|"pixel", ...}
  var selectedMatch = -1;       // the match chosen in the list of matches
  var stats = {draws: 0, ms: 0, mode: ""};
  function plotW() { return Math.max(width - GUTTER - 8, 50); }
  function xOf(t) { return GUTTER + (t - view.a) * plotW() / (view.b - view.a); }
  function tOf(x) { return view.a + (x - GUTTER) * (view.b - view.a) / plotW(); }
  function setView(a, b) {
    var minSpan = Math.min(20, SPAN);
    if (b - a < minSpan) { var c = (a + b) / 2; a = c - minSpan / 2; b = c + minSpan / 2; }
    if (b - a > SPAN) { a = 0; b = SPAN; }
    if (a < 0) { b -= a; a = 0; }
    if (b > SPAN) { a -= b - SPAN; b = SPAN; }
    view.a = a; view.b = b;
    schedule();
  }
  function zoom(f, centre) {
    if (centre === undefined) centre = (view.a + view.b) / 2;
    setView(centre - (centre - view.a) / f, centre + (view.b - centre) / f);
  }
  function pan(frac) { var d = (view.b - view.a) * frac; setView(view.a + d, view.b + d); }

  var pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () { pending = false; draw(); });
  }

  // ---- text --------------------------------------------------------------------------------
  function unitFor(ticks) {
    var s = ticks / RES;
    if (s >= 1) return [1, "s"];
    if (s >= 1e-3) return [1e3, "ms"];
    if (s >= 1e-6) return [1e6, "us"];
    return [1e9, "ns"];
  }
  function dur(ticks) {
    var u = unitFor(Math.abs(ticks) || 1);
    return (ticks / RES * u[0]).toFixed(3) + " " + u[1];
  }
  // a point in time: seconds from the trace's start, written as earlc writes a
  // time everywhere (the unit that keeps three decimals readable: 776.123 ms)
  function at(ticks) { return dur(ticks); }
  // the visible span's ends, in the unit of the span (so that they differ)
  function atIn(ticks, u) { return (ticks / RES * u[0]).toFixed(3) + " " + u[1]; }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;"}[c];
    });
  }
  function regionOf(cp) { if (cp < 0) return "?"; var p = paths[cp]; return p.slice(p.lastIndexOf("/") + 1); }

  // ---- lookups -------------------------------------------------------------------------------
  function firstAtLeast(a, v, lo, hi) {  // first index in [lo, hi) with a[i] >= v
    while (lo < hi) { var m = (lo + hi) >> 1; if (a[m] < v) lo = m + 1; else hi = m; }
    return lo;
  }
  function exactCovers(a, b) {
    if (ex.all) return true;
    for (var k = 0; k < ex.windows.length; k++)
      if (ex.windows[k][0] <= a && b <= ex.windows[k][1]) return true;
    return false;
  }
  function eachInView(r, fn) {  // fn(first, end) per depth of row r, outermost first
    var s = slices[r];
    for (var k = 0; k < s.length; k++) {
      var lo = firstAtLeast(X.end, view.a + 1e-9, s[k][0], s[k][1]);
      fn(lo, firstAtLeast(X.start, view.b, lo, s[k][1]));
    }
  }
  function exactInView() {  // instances overlapping the view on the shown rows
    var n = 0;
    shown.forEach(function (r) { eachInView(r, function (lo, hi) { n += hi - lo; }); });
    return n;
  }
  function levelFor(tpp) {  // the coarsest level with bins no wider than a pixel
    for (var k = 0; k < levels.length; k++) if (SPAN / levels[k].bins <= tpp) return k;
    return levels.length - 1;
  }
  function rowY(r) { return 2 + shown.indexOf(r) * ROW_H; }

  // ---- drawing --------------------------------------------------------------------------------
  function drawLevelRow(ctx, L, r, y, h) {
    var s = L.starts[r], v = L.values[r], pw = plotW(), tpp = (view.b - view.a) / pw;
    var scale = L.bins / (SPAN + 1), j = 0, runColour = null, x0 = 0;
    for (var px = 0; px <= pw; px++) {
      var c = null;
      if (px < pw) {
        var bin = Math.floor((view.a + (px + 0.5) * tpp) * scale);
        if (bin >= 0 && bin < L.bins) {
          if (j >= s.length - 1 || s[j] > bin || s[j + 1] <= bin) j = Math.max(firstAtLeast(s, bin + 1, 0, s.length) - 1, 0);
          var val = v[j];
          c = val === 255 ? null : colourOf[val];
        }
      }
      if (c !== runColour) {
        if (runColour) { ctx.fillStyle = runColour; ctx.fillRect(GUTTER + x0, y, px - x0, h); }
        runColour = c; x0 = px;
      }
    }
  }
  function drawExactRow(ctx, r, y, h) {
    var a = Math.max(rows[r].first, view.a), b = Math.min(rows[r].last, view.b);
    if (b > a) { ctx.fillStyle = colourOf[idleId]; ctx.fillRect(xOf(a), y, xOf(b) - xOf(a), h); }
    eachInView(r, function (lo, hi) {
      for (var i = lo; i < hi; i++) {
        var x0 = xOf(Math.max(X.start[i], view.a)), x1 = xOf(Math.min(X.end[i], view.b));
        ctx.fillStyle = colourOf[X.cp[i] >= 0 ? pathAct[X.cp[i]] : 8];
        ctx.fillRect(x0, y, Math.max(x1 - x0, 0.5), h);
      }
    });
  }
  function draw() {
    var t0 = performance.now();
    var ctx = canvas.getContext("2d"), pw = plotW(), tpp = (view.b - view.a) / pw;
    ctx.clearRect(0, 0, width, canvas.height);
    var exact = exactCovers(view.a, view.b) && X.row.length && exactInView() <= pw * shown.length / 2;
    var lvl = levelFor(tpp);
    stats.mode = exact ? "exact" : "level " + lvl;
    // labels
    ctx.font = "11px sans-serif"; ctx.textBaseline = "middle";
    shown.forEach(function (r, k) {
      var y = 2 + k * ROW_H, g = groups.filter(function (g) { return g.name === rows[r].group; })[0];
      ctx.fillStyle = k % 2 ? "#fafafa" : "#ffffff";
      ctx.fillRect(0, y, width, ROW_H);
      ctx.fillStyle = "#222";
      var first = g.rows[0] === r, label = rows[r].label;
      if (first && g.rows.length > 1) label = (folded[g.name] ? "\u25b8 " : "\u25be ") + label;
      else if (!first) label = "    " + label;
      ctx.fillText(label, 4, y + ROW_H * (BAND[0] + BAND[1]) / 2);
    });
    ctx.save();
    ctx.beginPath(); ctx.rect(GUTTER, 0, pw, canvas.height); ctx.clip();
    // activity
    shown.forEach(function (r, k) {
      var y = 2 + k * ROW_H + ROW_H * BAND[0], h = ROW_H * (BAND[1] - BAND[0]);
      if (exact) drawExactRow(ctx, r, y, h); else if (levels.length) drawLevelRow(ctx, levels[lvl], r, y, h);
    });
    // stopped rows: hatched to the end of the run
    D.stopped.forEach(function (s) {
      if (shown.indexOf(s.row) < 0 || s.until < view.a || s.since > view.b) return;
      var y = rowY(s.row) + ROW_H * BAND[0], h = ROW_H * (BAND[1] - BAND[0]);
      var x0 = xOf(Math.max(s.since, view.a)), x1 = xOf(Math.min(s.until, view.b));
      ctx.fillStyle = "#ffffff"; ctx.fillRect(x0, y, x1 - x0, h);
      ctx.strokeStyle = "#555"; ctx.lineWidth = 1; ctx.strokeRect(x0, y, x1 - x0, h);
      ctx.beginPath();
      for (var xx = x0 - h; xx < x1; xx += 6) { ctx.moveTo(Math.max(xx, x0), y + h - Math.max(x0 - xx, 0)); ctx.lineTo(Math.min(xx + h, x1), y + Math.max(xx + h - x1, 0)); }
      ctx.stroke();
      if (x1 - x0 > 80) {
        var tw = ctx.measureText(s.text).width;
        ctx.fillStyle = "#ffffff"; ctx.fillRect(x0 + 2, y + 1, tw + 4, h - 2);
        ctx.fillStyle = "#222"; ctx.fillText(s.text, x0 + 4, y + h / 2);
      }
    });
    if (D.run_ended !== null && D.run_ended >= view.a && D.run_ended <= view.b) {
      ctx.strokeStyle = "#444"; ctx.setLineDash([4, 3]);
      ctx.beginPath(); ctx.moveTo(xOf(D.run_ended), 0); ctx.lineTo(xOf(D.run_ended), canvas.height); ctx.stroke();
      ctx.setLineDash([]);
    }
    // wait states at least a pixel wide, in the strip under their row
    var wlo = firstAtLeast(W.start, view.a - wLong, 0, W.start.length), nWaits = 0;
    for (var i = wlo; i < W.start.length && W.start[i] < view.b; i++) {
      if (W.end[i] <= view.a || shown.indexOf(W.row[i]) < 0) continue;
      var x0 = xOf(Math.max(W.start[i], view.a)), x1 = xOf(Math.min(W.end[i], view.b));
      if (x1 - x0 < 1) continue;
      ctx.fillStyle = WD.props[W.prop[i]].colour;
      ctx.fillRect(x0, rowY(W.row[i]) + ROW_H * STRIP[0], x1 - x0, ROW_H * (STRIP[1] - STRIP[0]));
      nWaits++;
    }
    drawMessages(ctx, exact, lvl);
    drawMatches(ctx);
    drawSelection(ctx);
    ctx.restore();
    drawAxis();
    drawSeries();
    var su = unitFor(view.b - view.a);
    spanText.textContent = atIn(view.a, su) + " \u2013 " + atIn(view.b, su) + "  (" + dur(view.b - view.a) + " shown; " +
      (exact ? "every region instance" : "the dominant activity of each pixel") + ")";
    spanText.setAttribute("data-start", Math.round(view.a));
    spanText.setAttribute("data-end", Math.round(view.b));
    stats.draws++; stats.ms = performance.now() - t0; stats.waits = nWaits;
  }
  function yMid(r) { return rowY(r) + ROW_H * (BAND[0] + BAND[1]) / 2; }
  function drawMessages(ctx, exact, lvl) {
    var useExact = (M.all || exactCovers(view.a, view.b)) && msg.send.length;
    ctx.strokeStyle = "rgba(0,0,0,0.55)";
    if (useExact) {
      // one line per pair of rows and BUNDLE_PX pixels of send time: a single
      // message when zoomed in, a bundle where they crowd
      var lo = firstAtLeast(msg.send, view.a - msgLatency, 0, msg.send.length), hi = firstAtLeast(msg.send, view.b, lo, msg.send.length);
      var open = new Map();
      for (var i = lo; i < hi; i++) {
        if (msg.recv[i] < view.a || shown.indexOf(msg.src[i]) < 0 || shown.indexOf(msg.dst[i]) < 0) continue;
        var xs = xOf(msg.send[i]), key = (msg.src[i] * nRows + msg.dst[i]) * 1e7 + Math.floor(xs / BUNDLE_PX);
        var b = open.get(key);
        if (!b) open.set(key, b = {n: 0, xs: 0, xr: 0, src: msg.src[i], dst: msg.dst[i]});
        b.n++; b.xs += xs; b.xr += xOf(msg.recv[i]);
      }
      open.forEach(function (b) {
        ctx.lineWidth = Math.min(0.8 + 0.25 * Math.log2(b.n), 1.6);
        ctx.beginPath(); ctx.moveTo(b.xs / b.n, yMid(b.src)); ctx.lineTo(b.xr / b.n, yMid(b.dst)); ctx.stroke();
      });
      stats.messageLines = open.size;
      return;
    }
    if (!bundles.length) return;
    var B = bundles[Math.min(lvl, bundles.length - 1)];
    var blo = firstAtLeast(B.send, view.a - B.latency, 0, B.send.length);
    for (var k = blo; k < B.send.length && B.send[k] < view.b; k++) {
      if (B.recv[k] < view.a || shown.indexOf(B.src[k]) < 0 || shown.indexOf(B.dst[k]) < 0) continue;
      ctx.lineWidth = Math.min(0.5 + 0.25 * Math.log2(B.count[k]), 1.6);
      ctx.beginPath(); ctx.moveTo(xOf(B.send[k]), yMid(B.src[k])); ctx.lineTo(xOf(B.recv[k]), yMid(B.dst[k])); ctx.stroke();
    }
  }
  function drawMatches(ctx) {
    if (!match) return;
    var n = match.row.length / match.cols;
    ctx.fillStyle = "#0a84ff";
    for (var m = 0; m < n; m++) {
      var chosen = m === selectedMatch;
      ctx.strokeStyle = chosen ? "#0a84ff" : "rgba(10,132,255,0.4)"; ctx.lineWidth = chosen ? 2.5 : 1;
      var base = m * match.cols, lo = Infinity, hi = -Infinity;
      for (var c = 0; c < match.cols; c++) { lo = Math.min(lo, match.time[base + c]); hi = Math.max(hi, match.time[base + c]); }
      if (hi < view.a || lo > view.b) continue;
      ctx.beginPath();
      for (c = 0; c < match.cols; c++) {
        var r = match.row[base + c];
        if (shown.indexOf(r) < 0) continue;
        var x = xOf(match.time[base + c]), y = yMid(r);
        if (c === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      }
      ctx.stroke();
      for (c = 0; c < match.cols; c++) {
        if (shown.indexOf(match.row[base + c]) < 0) continue;
        ctx.beginPath(); ctx.arc(xOf(match.time[base + c]), yMid(match.row[base + c]), 3.5, 0, 7); ctx.fill();
      }
    }
  }
  function arrow(ctx, x0, y0, x1, y1) {
    ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
    var a = Math.atan2(y1 - y0, x1 - x0);
    ctx.beginPath(); ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - 9 * Math.cos(a - 0.4), y1 - 9 * Math.sin(a - 0.4));
    ctx.lineTo(x1 - 9 * Math.cos(a + 0.4), y1 - 9 * Math.sin(a + 0.4));
    ctx.closePath(); ctx.fill();
  }
  function drawSelection(ctx) {
    if (!selected) return;
    ctx.strokeStyle = "#000"; ctx.lineWidth = 2;
    var s = selected;
    if (s.kind === "wait" || s.kind === "interval") {
      var top = s.kind === "wait" ? STRIP[0] : BAND[0], bot = s.kind === "wait" ? STRIP[1] : BAND[1];
      if (shown.indexOf(s.row) >= 0) {
        var x0 = xOf(Math.max(s.start, view.a)), x1 = xOf(Math.min(s.end, view.b));
        ctx.strokeRect(x0 - 1, rowY(s.row) + ROW_H * top - 1, Math.max(x1 - x0, 1) + 2, ROW_H * (bot - top) + 2);
      }
    }
    if (s.kind === "wait" && s.prow >= 0 && shown.indexOf(s.prow) >= 0 && shown.indexOf(s.row) >= 0) {
      ctx.strokeStyle = "#d62728"; ctx.fillStyle = "#d62728"; ctx.lineWidth = 2;
      arrow(ctx, xOf(s.ptime), yMid(s.prow), xOf(Math.max(s.end, s.start)), yMid(s.row));
    }
  }
  function niceStep(span) {
    var raw = span / 8, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  }
  function drawAxis() {
    var ctx = axis.getContext("2d");
    ctx.clearRect(0, 0, width, 28);
    var u = unitFor(view.b - view.a), step = niceStep((view.b - view.a) / RES * u[0]);
    ctx.fillStyle = "#222"; ctx.strokeStyle = "#888"; ctx.font = "11px sans-serif"; ctx.textBaseline = "top";
    var first = Math.ceil(view.a / RES * u[0] / step) * step;
    for (var v = first; v <= view.b / RES * u[0] + 1e-12; v += step) {
      var x = xOf(v / u[0] * RES);
      ctx.beginPath(); ctx.moveTo(x, 0); ctx.lineTo(x, 5); ctx.stroke();
      ctx.fillText((+v.toPrecision(10)) + " " + u[1], x - 10, 7);
    }
  }
  var rowColours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  function drawSeries() {
    metrics.forEach(function (m, k) {
      var c = seriesCanvases[k], ctx = c.getContext("2d"), h = 90;
      ctx.clearRect(0, 0, width, h);
      var lo = Infinity, hi = -Infinity, parts = [];
      series.forEach(function (S) {
        if (S.metric !== m || shown.indexOf(S.row) < 0) return;
        var a = Math.max(firstAtLeast(S.time, view.a, 0, S.time.length) - 1, 0), b = Math.min(firstAtLeast(S.time, view.b, a, S.time.length) + 1, S.time.length);
        for (var i = a; i < b; i++) { lo = Math.min(lo, S.value[i]); hi = Math.max(hi, S.value[i]); }
        parts.push([S, a, b]);
      });
      ctx.fillStyle = "#222"; ctx.font = "11px sans-serif"; ctx.textBaseline = "top";
      ctx.fillText(m, 4, 4);
      if (!parts.length || !isFinite(lo)) return;
      if (hi === lo) hi = lo + 1;
      ctx.fillText(hi.toPrecision(4), 4, 18); ctx.textBaseline = "bottom"; ctx.fillText(lo.toPrecision(4), 4, h - 2);
      ctx.save(); ctx.beginPath(); ctx.rect(GUTTER, 0, plotW(), h); ctx.clip();
      parts.forEach(function (p) {
        var S = p[0];
        ctx.strokeStyle = rowColours[S.row % rowColours.length]; ctx.lineWidth = 1.2; ctx.beginPath();
        for (var i = p[1]; i < p[2]; i++) {
          var x = xOf(S.time[i]), y = h - 4 - (S.value[i] - lo) / (hi - lo) * (h - 10);
          if (i === p[1]) ctx.moveTo(x, y); else ctx.lineTo(x, y);
        }
        ctx.stroke();
      });
      ctx.restore();
    });
  }

  // ---- what is under the pointer --------------------------------------------------------
  function rowAt(y) {
    var k = Math.floor((y - 2) / ROW_H);
    return k >= 0 && k < shown.length ? shown[k] : -1;
  }
  function hit(x, y) {
    var r = rowAt(y);
    if (r < 0) return null;
    if (x < GUTTER) return {kind: "label", row: r};
    var t = tOf(x), f = (y - rowY(r)) / ROW_H, slop = 2 * (view.b - view.a) / plotW();
    if (f >= STRIP[0] - 0.04) {
      var best = -1;
      for (var i = firstAtLeast(W.start, t - wLong - slop, 0, W.start.length); i < W.start.length && W.start[i] <= t + slop; i++)
        if (W.row[i] === r && W.end[i] >= t - slop && (best < 0 || W.sev[i] > W.sev[best])) best = i;
      if (best >= 0) return waitHit(best);
    }
    if (exactCovers(t, t) && X.row.length) {
      var found = -1, sl = slices[r];
      for (var k = sl.length - 1; k >= 0 && found < 0; k--) {  // innermost first
        var j = firstAtLeast(X.end, t, sl[k][0], sl[k][1]);
        if (j < sl[k][1] && X.start[j] <= t) found = j;
      }
      if (found >= 0) return {kind: "interval", index: found, row: r, start: X.start[found], end: X.end[found]};
    }
    if (levels.length) {
      var L = levels[levelFor((view.b - view.a) / plotW())], bin = Math.floor(t * L.bins / (SPAN + 1));
      var s = L.starts[r], j2 = Math.max(firstAtLeast(s, bin + 1, 0, s.length) - 1, 0), v = L.values[r][j2];
      if (v !== 255 && v !== undefined) return {kind: "pixel", row: r, value: v, t: t};
    }
    return null;
  }
  function waitHit(i) {
    return {kind: "wait", index: i, row: W.row[i], start: W.start[i], end: W.end[i],
            prow: W.prow[i], ptime: W.ptime[i]};
  }
  function describe(h) {
    var loc = rows[h.row].name;
    if (h.kind === "interval") {
      var cp = X.cp[h.index];
      return "<b>" + esc(regionOf(cp)) + "</b> on " + esc(loc) +
        "<br>call path <span class=\"tl-path\">" + esc(cp >= 0 ? paths[cp] : "?") + "</span>" +
        "<br>from <span data-value=\"" + h.start + "\">" + at(h.start) + "</span>, for " +
        "<span class=\"tl-duration\" data-value=\"" + (h.end - h.start) + "\">" + dur(h.end - h.start) + "</span>";
    }
    if (h.kind === "wait") {
      var i = h.index, p = WD.props[W.prop[i]], out = "<b style=\"color:" + p.colour + "\">" + esc(p.title) + "</b> on " + esc(loc) +
        ": <span class=\"tl-severity\" data-value=\"" + W.sev[i] + "\">" + dur(W.sev[i]) + "</span> lost" +
        "<br>in <span class=\"tl-path\">" + esc(W.cp[i] >= 0 ? paths[W.cp[i]] : "?") + "</span> (event " + W.where[i] + ")" +
        "<br>waiting from " + at(W.start[i]) + " to " + at(W.end[i]);
      if (W.prow[i] >= 0)
        out += "<br>cause: it waited for <b>" + esc(regionOf(W.pcp[i])) + "</b> on " + esc(rows[W.prow[i]].name) +
          ", entered at <span class=\"tl-partner-time\" data-value=\"" + W.ptime[i] + "\">" + at(W.ptime[i]) + "</span> (the red arrow)";
      if (p.diagnosis) out += "<br><i>" + esc(p.diagnosis) + "</i>";
      return out;
    }
    if (h.kind === "pixel") {
      var a = h.value === idleId ? {label: "idle"} : act[h.value];
      return esc(loc) + " at " + at(h.t) + ": mostly <b>" + esc(a.label) + "</b> in this pixel (zoom in for single regions)";
    }
    return "";
  }

  // ---- input ----------------------------------------------------------------------------------
  var drag = null;
  function local(e) { var b = canvas.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top]; }
  canvas.addEventListener("wheel", function (e) {
    e.preventDefault();
    var p = local(e);
    zoom(e.deltaY < 0 ? 1.25 : 0.8, p[0] >= GUTTER ? tOf(p[0]) : undefined);
  }, {passive: false});
  canvas.addEventListener("mousedown", function (e) { drag = {x: e.clientX, a: view.a, b: view.b, moved: false}; });
  window.addEventListener("mousemove", function (e) {
    if (drag) {
      var dx = e.clientX - drag.x;
      if (Math.abs(dx) > 3) drag.moved = true;
      if (drag.moved) { var d = dx * (drag.b - drag.a) / plotW(); setView(drag.a - d, drag.b - d); }
    }
  });
  window.addEventListener("mouseup", function () { setTimeout(function () { drag = null; }, 0); });
  canvas.addEventListener("mousemove", function (e) {
    if (drag && drag.moved) return;
    var p = local(e), h = hit(p[0], p[1]);
    if (!h || h.kind === "label") { tip.hidden = true; return; }
    tip.innerHTML = describe(h);
    tip.hidden = false;
    tip.style.left = Math.min(p[0] + 14, width - 320) + "px";
    tip.style.top = (p[1] + 14) + "px";
  });
  canvas.addEventListener("mouseleave", function () { tip.hidden = true; });
  canvas.addEventListener("click", function (e) {
    if (drag && drag.moved) return;
    var p = local(e), h = hit(p[0], p[1]);
    canvas.focus();
    if (h && h.kind === "label") {
      var g = groups.filter(function (g) { return g.name === rows[h.row].group; })[0];
      if (g.rows.length > 1 && g.rows[0] === h.row) { folded[g.name] = !folded[g.name]; relayout(); schedule(); }
      return;
    }
    select(h);
  });
  canvas.addEventListener("keydown", function (e) {
    var k = e.key;
    if (k === "+" || k === "=") zoom(1.5);
    else if (k === "-" || k === "_") zoom(1 / 1.5);
    else if (k === "ArrowLeft") pan(-0.2);
    else if (k === "ArrowRight") pan(0.2);
    else if (k === "Home" || k === "0") setView(0, SPAN);
    else return;
    e.preventDefault();
  });
  root.querySelectorAll("button[data-act]").forEach(function (b) {
    b.addEventListener("click", function () {
      var a = b.getAttribute("data-act");
      if (a === "in") zoom(1.5); else if (a === "out") zoom(1 / 1.5); else setView(0, SPAN);
    });
  });
  function select(h) {
    selected = h && h.kind !== "pixel" ? h : null;
    details.innerHTML = h ? describe(h) : "Click an interval or a wait state for its details.";
    details.setAttribute("data-kind", h ? h.kind : "");
    schedule();
  }
  function zoomTo(a, b) {
    var pad = Math.max((b - a) * 0.5, 20);
    setView(a - pad, b + pad);
  }
  // the lists of occurrences and matches on the page zoom the timeline (the
  // lists come after this script: one listener on the document serves them)
  document.addEventListener("click", function (e) {
    var el = e.target.closest ? e.target.closest("[data-wait], [data-match]") : null;
    if (!el) return;
    if (el.hasAttribute("data-wait")) {
      var i = +el.getAttribute("data-wait");
      if (i >= 0) { zoomTo(W.start[i], W.end[i]); select(waitHit(i)); }
      else if (el.hasAttribute("data-time")) { var t = +el.getAttribute("data-time"); zoomTo(t, t); }
    } else if (match) {
      var m = +el.getAttribute("data-match"), lo = Infinity, hi = -Infinity;
      selectedMatch = m;
      for (var c = 0; c < match.cols; c++) { lo = Math.min(lo, match.time[m * match.cols + c]); hi = Math.max(hi, match.time[m * match.cols + c]); }
      zoomTo(lo, hi);
    }
    draw();
    root.scrollIntoView({block: "nearest"});
  });
  window.addEventListener("resize", function () { relayout(); schedule(); });

  window.earlcTimeline = {
    view: function () { return {start: view.a, end: view.b}; },
    span: SPAN,
    setView: function (a, b) { setView(a, b); draw(); },
    zoom: function (f, c) { zoom(f, c); draw(); },
    selected: function () { return selected; },
    stats: stats,
    redraw: function () { draw(); return stats.ms; },
    /* the client coordinates of the middle of wait state i, or of the time t on
       location row r (null when not in view) */
    locateWait: function (i) {
      if (shown.indexOf(W.row[i]) < 0) return null;
      var b = canvas.getBoundingClientRect();
      return {x: b.left + (xOf(Math.max(W.start[i], view.a)) + xOf(Math.min(W.end[i], view.b))) / 2,
              y: b.top + rowY(W.row[i]) + ROW_H * (STRIP[0] + STRIP[1]) / 2};
    },
    locate: function (r, t) {
      if (shown.indexOf(r) < 0 || t < view.a || t > view.b) return null;
      var b = canvas.getBoundingClientRect();
      return {x: b.left + xOf(t), y: b.top + yMid(r)};
    },
    instances: function (r) { var s = slices[r]; return s.length ? [s[0][0], s[s.length - 1][1]] : [0, 0]; },
    instance: function (i) { return {row: X.row[i], start: X.start[i], end: X.end[i], callpath: X.cp[i], depth: X.depth[i]}; },
    wait: function (i) { return {row: W.row[i], start: W.start[i], end: W.end[i], severity: W.sev[i], where: W.where[i], prop: WD.props[W.prop[i]].name}; },
    mode: function () { return stats.mode; },
    shownRows: function () { return shown.slice(); },
    selectedMatch: function () { return selectedMatch; }
  };
  relayout();
  draw();
})();
