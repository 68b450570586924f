/* CortexM Lens interactive report: draws the graphs that Python laid out (backend_core/report/interactive)
   as SVG, a node inspector, a stage selector and the N-way compare. No network, no libraries: the data is
   the JSON in <script id="cmlens-data">. Deep links / self-test: #stage=N&select=NODE, #lowering=I,
   #compare&row=K, #compare&side=I&select=NODE. */
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("cmlens-data").textContent);
  var SVGNS = "http://www.w3.org/2000/svg";
  var C = DATA.colors;
  var LINE_H = 14, PAD_Y = 8;

  /* ------------------------------------------------------------------ small helpers */
  function h(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), attrs[k]);
      else e.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return e;
  }
  function s(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function fmt(n) { return n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US"); }
  function bytes(n) { return n === null || n === undefined ? "—" : fmt(n) + " B"; }
  function kindLabel(k) { return DATA.kinds[k] || k; }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
  function parseHash() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (p) {
      if (!p) return;
      var i = p.indexOf("=");
      out[decodeURIComponent(i < 0 ? p : p.slice(0, i))] = i < 0 ? true : decodeURIComponent(p.slice(i + 1));
    });
    return out;
  }
  function setHash(obj) {
    var parts = [];
    for (var k in obj) if (obj[k] !== null && obj[k] !== undefined && obj[k] !== false)
      parts.push(obj[k] === true ? encodeURIComponent(k) : encodeURIComponent(k) + "=" + encodeURIComponent(obj[k]));
    history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search);
  }

  /* node-kind colours from resources/colors.json, one rule per kind */
  (function styleKinds() {
    var css = [];
    for (var k in C.node_kinds) {
      var c = C.node_kinds[k];
      css.push(".gv .k-" + k + " > rect.box{fill:" + c.fill + ";stroke:" + c.border + "}" +
               ".gv .k-" + k + " > text{fill:" + c.text + "}" +
               ".badge.k-" + k + "{background:" + c.fill + ";color:" + c.text + ";border-color:" + c.border + "}");
    }
    css.push(".gv .k-portable_fallback > rect.box{stroke:" + C.fallback_outline + ";stroke-width:3}");
    css.push(".gv .sel > rect.box{stroke:" + C.overlay.selected + ";stroke-width:3.5}");
    css.push(".gv .match > rect.halo{stroke:" + C.overlay.match + ";stroke-width:7;opacity:.9}");
    css.push(".gv .d-fb_added > rect.delta, .gv .d-removed > rect.delta{stroke:" + C.diff.removed + "}");
    css.push(".gv .d-fb_removed > rect.delta, .gv .d-added > rect.delta{stroke:" + C.diff.added + "}");
    css.push(".gv .d-changed > rect.delta{stroke:" + C.diff.rewritten + "}");
    css.push(".gv path.edge{stroke:" + C.overlay.edge + "} .gv polygon.arrow{fill:" + C.overlay.edge + "}");
    css.push(".gv rect.cluster{stroke:" + C.overlay.cluster_border + "}");
    [["fb_added", C.diff.removed], ["removed", C.diff.removed], ["fb_removed", C.diff.added], ["added", C.diff.added],
     ["changed", C.diff.rewritten]].forEach(function (p) {
      css.push("ul.changes li.dl-" + p[0] + ", .dlegend span.dl-" + p[0] + "{border-left-color:" + p[1] + "}");
    });
    document.head.appendChild(h("style", { text: css.join("\n") }));
  })();

  /* ------------------------------------------------------------------ one graph, pan + zoom */
  function GraphView(host, onSelect) {
    this.host = host;
    this.onSelect = onSelect;
    this.svg = s("svg", { "class": "gv", width: "100%", height: "100%" });
    this.root = s("g", {});
    this.svg.appendChild(this.root);
    host.appendChild(this.svg);
    this.t = { x: 0, y: 0, k: 1 };
    this.items = {};
    this.graph = null;
    this.onViewport = null;
    var self = this, drag = null;
    this.svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var r = self.svg.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
      var f = Math.exp(-ev.deltaY * 0.0015), k = Math.min(4, Math.max(0.05, self.t.k * f));
      self.t.x = px - (px - self.t.x) * k / self.t.k;
      self.t.y = py - (py - self.t.y) * k / self.t.k;
      self.t.k = k;
      self.apply(true);
    }, { passive: false });
    this.svg.addEventListener("mousedown", function (ev) {
      if (ev.button !== 0) return;
      drag = { x: ev.clientX, y: ev.clientY, tx: self.t.x, ty: self.t.y, moved: false };
    });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved) { self.t.x = drag.tx + dx; self.t.y = drag.ty + dy; self.apply(true); }
    });
    window.addEventListener("mouseup", function (ev) {
      if (!drag) return;
      var moved = drag.moved;
      drag = null;
      if (moved) return;
      var g = ev.target.closest ? ev.target.closest("g.node") : null;
      if (g && self.svg.contains(g)) self.onSelect(g.getAttribute("data-id"));
      else if (self.svg.contains(ev.target)) self.onSelect(null);
    });
  }
  GraphView.prototype.apply = function (byUser) {
    this.root.setAttribute("transform", "translate(" + this.t.x + "," + this.t.y + ") scale(" + this.t.k + ")");
    if (byUser && this.onViewport) this.onViewport(this);
  };
  GraphView.prototype.show = function (graph) {
    this.graph = graph;
    this.items = {};
    var root = clear(this.root);
    var cl = s("g", { "class": "clusters" }), ed = s("g", { "class": "edges" }), nd = s("g", { "class": "nodes" });
    root.appendChild(cl); root.appendChild(ed); root.appendChild(nd);
    graph.clusters.forEach(function (c) {
      var fills = C.overlay.cluster_fills;
      cl.appendChild(s("rect", { "class": "cluster", x: c[1], y: c[2], width: c[3], height: c[4], rx: 6,
                                 fill: fills[c[5] % fills.length] }));
      var t = s("text", { "class": "clabel", x: c[1] + 8, y: c[2] + 13 });
      t.textContent = c[0] + (c[6] ? "  ⚠ " + c[6] : "");
      cl.appendChild(t);
    });
    graph.edges.forEach(function (e) {
      ed.appendChild(s("path", { "class": "edge", d: e[2] }));
      if (e[3]) ed.appendChild(s("polygon", { "class": "arrow", points: e[3] }));
    });
    var self = this;
    graph.items.forEach(function (it) {
      var g = s("g", { "class": "node k-" + it[5], "data-id": it[0], transform: "translate(" + it[1] + "," + it[2] + ")" });
      g.appendChild(s("rect", { "class": "halo", x: -5, y: -5, width: it[3] + 10, height: it[4] + 10, rx: 8 }));
      g.appendChild(s("rect", { "class": "delta", x: -3, y: -3, width: it[3] + 6, height: it[4] + 6, rx: 7 }));
      g.appendChild(s("rect", { "class": "box", x: 0, y: 0, width: it[3], height: it[4], rx: 5 }));
      it[6].forEach(function (line, i) {
        var t = s("text", { x: it[3] / 2, y: PAD_Y + LINE_H * i + 11, "class": i === 0 ? "t0" : "t1" });
        t.textContent = line;
        g.appendChild(t);
      });
      var tip = s("title", {});
      tip.textContent = it[0];
      g.appendChild(tip);
      nd.appendChild(g);
      self.items[it[0]] = { g: g, x: it[1], y: it[2], w: it[3], h: it[4], row: it };
    });
  };
  GraphView.prototype.size = function () {
    var r = this.svg.getBoundingClientRect();
    return { w: r.width || 600, h: r.height || 400 };
  };
  /* the whole graph when it is readable so (zoom >= 0.6), else a readable zoom; always from the top */
  GraphView.prototype.fit = function () {
    if (!this.graph) return;
    var z = this.size(), m = 16, gw = Math.max(this.graph.w, 1), gh = Math.max(this.graph.h, 1);
    var fitW = (z.w - 2 * m) / gw, all = Math.min(1, fitW, (z.h - 2 * m) / gh);
    var k = all >= 0.6 ? all : Math.max(all, Math.min(0.9, fitW));
    this.t = { k: k, x: (z.w - gw * k) / 2, y: m };     /* from the top: centred, a short graph sat 250 px down */
    this.apply(false);
  };
  GraphView.prototype.item = function (nodeId) {
    if (!this.graph || nodeId === null || nodeId === undefined) return null;
    if (this.items[nodeId]) return nodeId;
    var it = this.graph.node_item[nodeId];
    return it && this.items[it] ? it : null;
  };
  GraphView.prototype.setClass = function (ids, cls) {
    for (var k in this.items) this.items[k].g.classList.remove(cls);
    var self = this;
    (ids || []).forEach(function (i) { if (self.items[i]) self.items[i].g.classList.add(cls); });
  };
  GraphView.prototype.setDeltas = function (map) {
    for (var k in this.items) {
      var g = this.items[k].g;
      ["d-fb_added", "d-fb_removed", "d-changed", "d-added", "d-removed"].forEach(function (c) { g.classList.remove(c); });
      if (map[k]) g.classList.add("d-" + map[k]);
    }
  };
  /* colour the boxes by a number per item (null: back to the kind colours); items without one are grey */
  GraphView.prototype.setHeat = function (values) {
    var max = 0, k, v;
    for (k in values || {}) if (values[k] > max) max = values[k];
    for (k in this.items) {
      var g = this.items[k].g, box = g.querySelector("rect.box"), texts = g.querySelectorAll("text");
      if (!values) { box.style.fill = ""; texts.forEach(function (t) { t.style.fill = ""; }); continue; }
      v = values[k];
      var fill = v === undefined || v === null ? C.overlay.heat_none_fill : heat(max ? v / max : 0);
      var ink = v === undefined || v === null ? C.overlay.heat_none_text : (max && v / max > 0.55 ? "#ffffff" : "#212121");
      box.style.fill = fill;
      texts.forEach(function (t) { t.style.fill = ink; });
    }
  };
  function heat(t) {                        /* pale -> deep blue (red stays the colour of a fallback) */
    var stops = [[239, 246, 252], [158, 202, 225], [49, 130, 189], [8, 48, 107]], x = Math.max(0, Math.min(1, t)) * 3;
    var i = Math.min(2, Math.floor(x)), f = x - i, a = stops[i], b = stops[i + 1];
    return "rgb(" + [0, 1, 2].map(function (j) { return Math.round(a[j] + (b[j] - a[j]) * f); }).join(",") + ")";
  }

  /* bring items into view (keep the zoom unless they do not fit) */
  GraphView.prototype.reveal = function (ids, force) {
    var self = this, b = null;
    (ids || []).forEach(function (i) {
      var it = self.items[i];
      if (!it) return;
      b = b ? { x0: Math.min(b.x0, it.x), y0: Math.min(b.y0, it.y), x1: Math.max(b.x1, it.x + it.w), y1: Math.max(b.y1, it.y + it.h) }
            : { x0: it.x, y0: it.y, x1: it.x + it.w, y1: it.y + it.h };
    });
    if (!b) return;
    var z = this.size(), k = this.t.k;
    var sx0 = b.x0 * k + this.t.x, sy0 = b.y0 * k + this.t.y, sx1 = b.x1 * k + this.t.x, sy1 = b.y1 * k + this.t.y;
    if (!force && sx0 >= 8 && sy0 >= 8 && sx1 <= z.w - 8 && sy1 <= z.h - 8) return;
    var need = Math.min((z.w - 40) / Math.max(b.x1 - b.x0, 1), (z.h - 40) / Math.max(b.y1 - b.y0, 1));
    if (need < k) k = Math.max(0.05, need);
    this.t.k = k;
    this.t.x = z.w / 2 - (b.x0 + b.x1) / 2 * k;
    this.t.y = z.h / 2 - (b.y0 + b.y1) / 2 * k;
    this.apply(false);
  };
  /* the item nearest the middle of the pane (what the user is looking at) */
  GraphView.prototype.centreItem = function () {
    var z = this.size(), cx = (z.w / 2 - this.t.x) / this.t.k, cy = (z.h / 2 - this.t.y) / this.t.k, best = null, bd = 1e18;
    for (var k in this.items) {
      var it = this.items[k], dx = it.x + it.w / 2 - cx, dy = it.y + it.h / 2 - cy, d = dx * dx + dy * dy;
      if (d < bd) { bd = d; best = k; }
    }
    return best;
  };

  /* ------------------------------------------------------------------ one lowering's data */
  function Lowering(b, index) {
    this.b = b;
    this.index = index;
    this.stageMaps = b.stages.map(function (st) {
      var m = {};
      st.nodes.forEach(function (ni) { var r = b.nodes[ni]; m[r.id] = r; });
      return m;
    });
  }
  Lowering.prototype.final = function () { return this.b.stages.length - 1; };
  Lowering.prototype.node = function (stage, id) { return (this.stageMaps[stage] || {})[id] || null; };
  Lowering.prototype.graph = function (stage) { return this.b.graphs[this.b.stages[stage].graph]; };
  /* the same node in another stage: same id, else same debug handle, else what it was rewritten to/from */
  Lowering.prototype.follow = function (fromStage, id, toStage) {
    if (id === null || id === undefined) return null;
    if (this.node(toStage, id)) return id;
    var r = this.node(fromStage, id);
    var map = this.stageMaps[toStage];
    if (r && r.dh !== undefined) for (var k in map) if (map[k].dh === r.dh && map[k].fx === "call_function") return k;
    var cur = id, step = toStage > fromStage ? 1 : -1;
    for (var s = fromStage; s !== toStage; s += step) {
      var st = this.b.stages[step > 0 ? s + 1 : s];
      st.rewritten.forEach(function (p) { if (step > 0 ? p[0] === cur : p[1] === cur) cur = step > 0 ? p[1] : p[0]; });
    }
    return this.node(toStage, cur) ? cur : null;
  };

  /* ------------------------------------------------------------------ inspector html */
  function table(rows) {
    var t = h("table", { cls: "kv" });
    rows.forEach(function (r) { if (r && r[1] !== null && r[1] !== undefined && r[1] !== "") t.appendChild(h("tr", null, h("td", { cls: "k", text: r[0] }), h("td", null, r[1]))); });
    return t;
  }
  function section(title) {
    var d = h("div", { cls: "sec" }, h("h3", { text: title }));
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) d.appendChild(arguments[i]);
    return d;
  }
  function fallbackBox(fb) {
    var box = h("div", { cls: "fbbox" }, h("b", { text: "⚠ Portable fallback — " + fb.cat }), h("p", { cls: "why", text: fb.why }));
    if (fb.ev && fb.ev.length) {
      var ul = h("ul", { cls: "ev" });
      fb.ev.forEach(function (e) { ul.appendChild(h("li", { text: e })); });
      box.appendChild(h("b", { text: "Evidence" }));
      box.appendChild(ul);
    }
    if (fb.user) box.appendChild(h("p", null, h("b", { text: "The op you wrote: " }), h("code", { text: fb.user[0] }),
                                   " `" + fb.user[1] + "` at quantization time" + (fb.user[2] ? ", " + fb.user[2] : "")));
    if (fb.fix) box.appendChild(h("p", { cls: "fix" }, h("b", { text: "Suggested change: " }), fb.fix));
    if (fb.verified) box.appendChild(h("p", { cls: fb.verified === "verified" ? "ok" : "bad", text: fb.verified + (fb.verification ? " — " + fb.verification : "") }));
    if (fb.stage) box.appendChild(h("p", { cls: "dim", text: "last touched by: " + fb.stage }));
    return box;
  }
  function memorySection(m) {
    if (!m) return null;
    return section("Memory (ExecuTorch's plan in the .pte)", table([
      m.step !== undefined ? ["step", "#" + m.step + (m.peak ? "  (the peak of the arena)" : "")] : null,
      m.live !== undefined ? ["arena alive", bytes(m.live) + (m.arena ? " of " + bytes(m.arena) + " planned" : "")] : null,
      m.out ? ["output", bytes(m.out[0]) + " " + (m.out[1] || "") + " (mem_id " + m.out[2] + ", offset " + fmt(m.out[3]) + ")"] : null,
      m.scratch ? ["CMSIS-NN scratch", bytes(m.scratch)] : null,
      m.float ? ["float bytes alive", bytes(m.float)] : null,
      m.island ? ["float island", "yes: this op runs in float between a dequantize and a quantize"] : null,
      m.const ? ["constants (flash)", bytes(m.const)] : null]));
  }
  function costSection(c, unit) {
    if (!c) return null;
    return section("Cost", table([
      c.macs ? ["MACs", fmt(c.macs) + " (from shapes)"] : null,
      c.bytes ? ["bytes moved", bytes(c.bytes) + " (each argument read once, output written once)"] : null,
      c.count !== undefined ? [c.unit || "measured", fmt(c.count) + " (" + (100 * c.share).toFixed(1) + "% of the kernels)" + (unit ? " — " + unit : "")] : null,
      c.ms !== undefined ? ["≈ ms (estimate)", c.ms.toFixed(3) + " ms: the cycle estimate on the board (see the profile section)"] : null]));
  }
  /* the inspector of node `id` at `stage` of lowering L; `go(stage, id)` navigates */
  function inspectNode(L, stage, id, go) {
    var out = h("div", { cls: "insp" });
    var r = L.node(stage, id);
    if (!r) {
      var g = L.graph(stage).items.filter(function (it) { return it[0] === id; })[0];
      if (g && g[7]) {                                   /* a collapsed module group */
        out.appendChild(h("h2", { text: id.replace(/^group:/, "") }));
        out.appendChild(h("p", { cls: "dim", text: g[7].length + " nodes" + (g[8] ? ", " + g[8] + " fallback(s)" : "") + " (collapsed module group)" }));
        var ul = h("ul", { cls: "links" });
        g[7].forEach(function (m) { var mr = L.node(stage, m); ul.appendChild(h("li", null, h("a", { href: "#", onclick: function (ev) { ev.preventDefault(); go(stage, m, true); }, text: m }), mr ? "  " + mr.op : "")); });
        out.appendChild(ul);
      } else out.appendChild(h("p", { cls: "dim", text: id + " is not in stage " + stage + "." }));
      return out;
    }
    var st = L.b.stages[stage];
    out.appendChild(h("h2", { text: r.id }));
    out.appendChild(h("p", null, h("span", { cls: "badge k-" + r.kind, text: kindLabel(r.kind) }), h("span", { cls: "dim", text: "  in stage " + stage + ": " + st.name })));
    var final = stage === L.final();
    if (final && L.b.preflight[r.id]) L.b.preflight[r.id].forEach(function (f) {
      out.appendChild(h("div", { cls: "pfbox" }, h("b", { text: "Pre-flight: " + f.certainty + " — " + f.rule }), h("p", { text: f.message }), f.fix ? h("p", { cls: "fix", text: "Fix: " + f.fix }) : null));
    });
    if (r.fb) out.appendChild(fallbackBox(r.fb));
    var src = r.src ? h("span", null, r.src[0] + ":" + r.src[1] + (r.src[2] ? " in " + r.src[2] : ""), r.src[3] ? h("div", { cls: "mono", text: r.src[3] }) : null) : null;
    out.appendChild(table([["op", h("span", { cls: "mono", text: r.op })], ["fx op", r.fx], ["output", r.t || "—"],
      r.mod ? ["module", (r.mod[0] || "(top level)") + (r.mod[1] ? "  " + r.mod[1] : "")] : null, ["source", src],
      r.chain ? ["called from", h.apply(null, ["div", null].concat(r.chain.map(function (c, i) { return h("div", { cls: "mono", text: (i ? "via " : "") + c }); })))] : null,
      r.dh !== undefined ? ["debug handle", String(r.dh)] : null, r.from ? ["from", r.from.join(", ")] : null,
      r.flags ? ["flags", r.flags.map(function (f) { return f[0] + " = " + f[1]; }).join("; ")] : null]));
    if (r.qin || r.qout || r.rq) {
      var rows = (r.qin || []).map(function (q) { return ["input " + q[0], h("span", { cls: "q", text: q[1] })]; });
      if (r.qout) rows.push(["output", h("span", { cls: "q", text: r.qout })]);
      if (r.rq) rows.push(["requantise", h("span", { cls: "q", text: r.rq })]);
      out.appendChild(section("Quantization", table(rows)));
    }
    if (final) {
      out.appendChild(memorySection(L.b.memory[r.id]) || h("span"));
      out.appendChild(costSection(L.b.cost[r.id], L.b.profile_unit) || h("span"));
    }
    if (r.args) {
      var ol = h("ol", { cls: "args", start: "0" });
      r.args.forEach(function (a) { ol.appendChild(h("li", { cls: "mono", text: a })); });
      out.appendChild(section("Arguments", ol));
    }
    /* the node across stages (provenance) */
    var hist = h("div", { cls: "hist" });
    for (var k = 0; k < L.b.stages.length; k++) {
      var f = L.follow(stage, r.id, k);
      var cell = f ? h("a", { href: "#", title: L.b.stages[k].name + ": " + f, cls: "hs" + (k === stage ? " cur" : "") + (L.node(k, f).kind === "portable_fallback" ? " fbk" : ""),
                             onclick: (function (kk, ff) { return function (ev) { ev.preventDefault(); go(kk, ff, false); }; })(k, f), text: String(k) })
                   : h("span", { cls: "hs none", title: L.b.stages[k].name + ": not there", text: String(k) });
      hist.appendChild(cell);
    }
    out.appendChild(section("Across the stages", hist));
    return out;
  }
  function stageOverview(L, stage, go) {
    var st = L.b.stages[stage], out = h("div", { cls: "insp" });
    out.appendChild(h("h2", { text: stage + ". " + st.name }));
    out.appendChild(h("p", { cls: "dim", text: st.nodes.length + " nodes, " + st.seconds.toFixed(2) + " s" + (st.changed ? "" : " (the pass changed nothing)") }));
    var counts = h("div", { cls: "counts" });
    Object.keys(st.counts).forEach(function (k) { counts.appendChild(h("span", { cls: "badge k-" + k, text: kindLabel(k) + ": " + st.counts[k] })); });
    out.appendChild(counts);
    function links(title, ids, stageOf) {
      if (!ids.length) return;
      var ul = h("ul", { cls: "links" });
      ids.slice(0, 60).forEach(function (p) {
        var id = Array.isArray(p) ? p[1] : p, text = Array.isArray(p) ? p[0] + " → " + p[1] : p;
        ul.appendChild(h("li", null, h("a", { href: "#", text: text, onclick: function (ev) { ev.preventDefault(); go(stageOf, id, true); } })));
      });
      if (ids.length > 60) ul.appendChild(h("li", { cls: "dim", text: "… " + (ids.length - 60) + " more" }));
      out.appendChild(section(title + " (" + ids.length + ")", ul));
    }
    if (L.b.fallbacks.length) {
      var ul = h("ul", { cls: "links fbl" });
      L.b.fallbacks.forEach(function (f) {
        ul.appendChild(h("li", null, h("a", { href: "#", text: f.node, onclick: function (ev) { ev.preventDefault(); go(L.final(), f.node, true); } }),
                         h("span", { cls: "dim", text: "  " + f.category + (f.source ? "  " + f.source.split("/").pop() : "") })));
      });
      out.appendChild(section("Fallbacks in the final program (" + L.b.fallbacks.length + ")", ul));
    }
    var wt = function (id) { var r = L.node(stage, id); return r && r.kind === "weight" ? 1 : 0; };
    links("Added by this stage", st.added.slice().sort(function (a, b) { return wt(a) - wt(b); }), stage);   /* weights last */
    links("Rewritten", st.rewritten, stage);
    if (st.removed.length && stage > 0) links("Removed (shown in the stage before)", st.removed, stage - 1);
    if (st.log.length) {
      var lg = h("ul", { cls: "ev" });
      st.log.forEach(function (l) { lg.appendChild(h("li", { text: l })); });
      out.appendChild(section("What the stage logged", lg));
    }
    out.appendChild(h("p", { cls: "dim hint", text: "Click a node to inspect it. Drag to pan, wheel to zoom, ←/→ to step through the stages." }));
    return out;
  }

  /* ------------------------------------------------------------------ the stage viewer of one lowering */
  function StageViewer(host, L, hashKey) {
    var self = this;
    this.L = L;
    this.stage = L.final();
    this.selected = null;
    this.hashKey = hashKey;
    var bar = h("div", { cls: "bar" });
    var sfx = hashKey === null ? "" : "-" + hashKey;          /* ids stay unique with one viewer per side */
    this.select = h("select", { id: "stage-select" + sfx, title: "stage", onchange: function () { self.setStage(+self.select.value); } });
    L.b.stages.forEach(function (st, i) {
      var d = (st.added.length ? " +" + st.added.length : "") + (st.removed.length ? " −" + st.removed.length : "") + (st.rewritten.length ? " ~" + st.rewritten.length : "");
      self.select.appendChild(h("option", { value: String(i), text: i + ". " + st.name + " — " + st.nodes.length + " nodes" + d + (st.changed ? "" : " (unchanged)") }));
    });
    this.search = h("input", { type: "search", placeholder: "find a node or op…", cls: "find",
                               onkeydown: function (ev) { if (ev.key === "Enter") self.find(self.search.value); } });
    bar.appendChild(h("button", { title: "previous stage (←)", onclick: function () { self.setStage(self.stage - 1); }, text: "◀" }));
    bar.appendChild(this.select);
    bar.appendChild(h("button", { title: "next stage (→)", onclick: function () { self.setStage(self.stage + 1); }, text: "▶" }));
    bar.appendChild(h("button", { title: "fit the graph", onclick: function () { self.view.fit(); }, text: "fit" }));
    bar.appendChild(this.search);
    this.overlays = overlayChoices(L);
    this.overlay = h("select", { cls: "overlay", id: "overlay" + sfx, title: "colour the final graph's nodes by a figure",
                                 onchange: function () { self.paint(); } });
    this.overlays.forEach(function (o, i) { self.overlay.appendChild(h("option", { value: String(i), text: o[0] })); });
    if (this.overlays.length > 1) bar.appendChild(this.overlay);
    this.note = h("span", { cls: "dim" });
    bar.appendChild(this.note);
    var legend = h("span", { cls: "legend" });
    Object.keys(L.b.stages[this.stage].counts).forEach(function (k) { legend.appendChild(h("span", { cls: "badge k-" + k, text: kindLabel(k) })); });
    bar.appendChild(legend);
    var body = h("div", { cls: "vbody" });
    this.pane = h("div", { cls: "pane" });
    this.insp = h("div", { cls: "side", id: "inspector" + sfx });
    body.appendChild(this.pane);
    body.appendChild(this.insp);
    host.appendChild(bar);
    host.appendChild(body);
    this.view = new GraphView(this.pane, function (item) { self.pick(item); });
  }
  /* [label, {node: value} | null]: what the final graph can be coloured by (what the report carries) */
  function overlayChoices(L) {
    var out = [["colour: node kind", null]];
    function pick(src, f) { var m = {}, n = 0; for (var k in src) { var v = f(src[k]); if (v) { m[k] = v; n++; } } return n ? m : null; }
    var live = pick(L.b.memory, function (m) { return m.live; }), macs = pick(L.b.cost, function (c) { return c.macs; });
    var cnt = pick(L.b.cost, function (c) { return c.count; }), moved = pick(L.b.cost, function (c) { return c.bytes; });
    if (cnt) out.push(["colour: " + (L.b.profile_unit ? "measured count" : "measured"), cnt]);
    if (live) out.push(["colour: arena bytes alive", live]);
    if (macs) out.push(["colour: MACs", macs]);
    if (moved) out.push(["colour: bytes moved", moved]);
    return out;
  }
  StageViewer.prototype.paint = function () {
    var o = this.overlays[+this.overlay.value || 0], v = this.view, vals = null;
    if (o[1] && this.stage === this.L.final()) {
      vals = {};
      for (var n in o[1]) { var it = v.item(n); if (it) vals[it] = (vals[it] || 0) + o[1][n]; }
    }
    this.overlay.disabled = this.stage !== this.L.final();
    this.overlay.title = this.overlay.disabled ? "the figures are of the final program: go to the last stage" : "colour the final graph's nodes by a figure";
    v.setHeat(vals);
    if (vals) {
      var top = null;
      for (var i in vals) if (top === null || vals[i] > vals[top]) top = i;
      this.note.textContent = "darkest: " + fmt(vals[top]) + " at " + top + "; grey: no figure";
    } else if (this.note.textContent.indexOf("darkest") === 0) this.note.textContent = "";
  };
  StageViewer.prototype.activate = function () {
    this.setStage(this.stage, true);
  };
  StageViewer.prototype.setStage = function (i, refit) {
    var L = this.L;
    if (i < 0 || i >= L.b.stages.length) return;
    var prevGraph = this.view.graph, prev = this.stage;
    this.selected = L.follow(prev, this.selected, i);
    this.stage = i;
    this.select.value = String(i);
    var g = L.graph(i);
    if (g !== prevGraph || refit) { this.view.show(g); this.view.fit(); }
    this.paint();
    this.note.textContent = g.engine === "dot" ? "" : "simple layout: " + g.note;
    this.refresh(true);
  };
  StageViewer.prototype.pick = function (itemId) {
    var g = this.L.graph(this.stage);
    this.selected = itemId;
    if (itemId && !this.L.node(this.stage, itemId)) {              /* a group box: keep its id */
      var it = g.items.filter(function (x) { return x[0] === itemId; })[0];
      if (!it) this.selected = null;
    }
    this.refresh(false);
  };
  StageViewer.prototype.go = function (stage, id, reveal) {
    if (stage !== this.stage) { this.selected = null; this.setStage(stage); }
    this.selected = id;
    this.refresh(reveal !== false);
  };
  StageViewer.prototype.refresh = function (reveal) {
    var self = this, item = this.view.item(this.selected);
    this.view.setClass(item ? [item] : [], "sel");
    if (item && reveal) this.view.reveal([item]);
    clear(this.insp).appendChild(this.selected ? inspectNode(this.L, this.stage, this.selected, function (s, i, r) { self.go(s, i, r); })
                                                : stageOverview(this.L, this.stage, function (s, i, r) { self.go(s, i, r); }));
    var hs = {};
    if (this.hashKey !== null) hs.lowering = this.hashKey;
    hs.stage = this.stage;
    hs.select = this.selected;
    setHash(hs);
  };
  StageViewer.prototype.find = function (q) {
    q = q.trim().toLowerCase();
    if (!q) return;
    var map = this.L.stageMaps[this.stage], hits = Object.keys(map).filter(function (k) { return k.toLowerCase().indexOf(q) >= 0 || map[k].op.toLowerCase().indexOf(q) >= 0; });
    var vis = this.view;
    hits = hits.filter(function (k) { return vis.item(k); });
    var cur = hits.indexOf(this.selected);
    if (!hits.length) { this.note.textContent = "no node matches “" + q + "”"; return; }
    this.note.textContent = hits.length + " match(es)";
    this.go(this.stage, hits[(cur + 1) % hits.length], true);
  };
  StageViewer.prototype.key = function (ev) {
    if (ev.target && (ev.target.tagName === "INPUT" || ev.target.tagName === "SELECT")) return;
    if (ev.key === "ArrowRight") this.setStage(this.stage + 1);
    else if (ev.key === "ArrowLeft") this.setStage(this.stage - 1);
    else if (ev.key === "Escape") this.pick(null);
  };

  /* ------------------------------------------------------------------ N-way compare */
  /* the nodes a row has on one side: its own, or (a fused activation) those of the op it was folded into */
  function sideNodes(sd) { return sd ? sd.nodes.concat(sd.via || []) : []; }
  function CompareViewer(host, Ls, cmp) {
    var self = this;
    this.Ls = Ls;
    this.cmp = cmp;
    this.sel = null;                          /* {side, node} or {row} */
    this.rowsOf = Ls.map(function () { return {}; });   /* per side: node id -> [row indexes] */
    cmp.rows.forEach(function (r, ri) {
      r.sides.forEach(function (sd, si) {
        if (!sd) return;
        sideNodes(sd).forEach(function (n) { (self.rowsOf[si][n] = self.rowsOf[si][n] || []).push(ri); });
      });
    });
    var left = h("div", { cls: "clist", id: "what-changed" });
    var right = h("div", { cls: "cright" });
    var panes = h("div", { cls: "cpanes" }), rowInsp = h("div", { cls: "crow", id: "compare-inspector" });
    right.appendChild(panes);
    right.appendChild(rowInsp);
    host.appendChild(left);
    host.appendChild(right);
    this.rowInsp = rowInsp;
    this.sync = true;
    this.views = Ls.map(function (L, si) {
      var col = h("div", { cls: "cpane" });
      var sub = L.b.model + " → " + L.b.target + ", " + L.b.flow + " · " + L.b.summary.fallbacks + " fallback(s)";
      col.appendChild(h("div", { cls: "ctitle", title: cmp.sides[si] + ": " + sub }, h("b", { text: cmp.sides[si] }), h("span", { cls: "dim", text: "  " + sub })));
      var p = h("div", { cls: "pane" });
      col.appendChild(p);
      panes.appendChild(col);
      if (!L.b.stages.length) p.appendChild(h("p", { cls: "dim pad", text: "No graph for this side (a baseline file holds the facts of the compare, not the graph)." }));
      var v = new GraphView(p, function (item) { self.pickNode(si, item); });
      v.onViewport = function (src) { self.followViewport(si, src); };
      return v;
    });
    this.buildList(left);
  }
  CompareViewer.prototype.activate = function () {
    var self = this;
    this.views.forEach(function (v, si) {
      var L = self.Ls[si];
      if (!L.b.stages.length) return;
      v.show(L.graph(L.final())); v.fit(); v.setDeltas(self.deltaMap(si));
    });
    this.refresh(true);
  };
  /* item id -> delta class, for one side */
  CompareViewer.prototype.deltaMap = function (si) {
    var v = this.views[si], out = {};
    this.cmp.rows.forEach(function (r) {
      var sd = r.sides[si];
      if (!sd || !sd.delta) return;
      sd.nodes.forEach(function (n) { var it = v.item(n); if (it && (!out[it] || out[it] === "changed")) out[it] = sd.delta; });
    });
    return out;
  };
  CompareViewer.prototype.buildList = function (left) {
    var self = this, cmp = this.cmp;
    left.appendChild(h("h3", { text: "Summary" }));
    var t = h("table", { cls: "deltas" }), head = h("tr", null, h("th", { text: "" }));
    cmp.sides.forEach(function (sd) { head.appendChild(h("th", { text: sd.split(" ")[0], title: sd })); });
    t.appendChild(head);
    cmp.summary.forEach(function (row) {
      var tr = h("tr", null, h("td", { cls: "k", text: row[0] }));
      row[1].forEach(function (v, i) {
        var d = row[2][i] || "", pct = d.match(/\(([^)]*%)\)/);
        tr.appendChild(h("td", { cls: "num", title: d }, v === null ? "—" : String(v),
                         d ? h("div", { cls: row[3][i] === true ? "bad" : row[3][i] === false ? "ok" : "dim", text: pct ? pct[1] : d }) : null));
      });
      t.appendChild(tr);
    });
    left.appendChild(t);
    left.appendChild(h("p", { cls: "dim", text: "Under each value: its change against [1]." }));
    if (cmp.note) left.appendChild(h("p", { cls: "weak", text: cmp.note }));
    var legend = h("div", { cls: "dlegend" });
    [["fb_added", "new fallback"], ["fb_removed", "fallback gone"], ["changed", "changed"], ["added", "only on a later side"], ["removed", "not on a later side"]].forEach(function (p) {
      legend.appendChild(h("span", { cls: "dl-" + p[0] }, p[1]));
    });
    left.appendChild(legend);
    var changed = cmp.rows.map(function (r, i) { return i; }).filter(function (i) { return cmp.rows[i].delta && cmp.rows[i].delta !== "same"; });
    left.appendChild(h("h3", { text: "What changed (" + changed.length + ")" }));
    var ul = h("ul", { cls: "changes" });
    this.listItems = {};
    changed.forEach(function (ri) {
      var r = cmp.rows[ri];
      var li = h("li", { cls: "dl-" + r.delta, "data-row": String(ri), onclick: function () { self.pickRow(ri); } },
                 h("div", { cls: "what", text: r.what }), h("div", { cls: "dim", text: r.label + (r.source ? "  " + r.source.split("/").pop() : "") }));
      ul.appendChild(li);
      self.listItems[ri] = li;
    });
    if (!changed.length) ul.appendChild(h("li", { cls: "dim", text: "Nothing changed between the sides." }));
    left.appendChild(ul);
  };
  CompareViewer.prototype.pickRow = function (ri) { this.sel = ri === null ? null : { row: ri }; this.refresh(true); };
  CompareViewer.prototype.pickNode = function (si, item) {
    if (item === null) { this.sel = null; this.refresh(false); return; }
    this.sel = { side: si, node: item };
    this.refresh(true, si);
  };
  /* the rows behind the selection and, per side, the node ids to highlight */
  CompareViewer.prototype.selection = function () {
    var self = this, rows = [];
    if (!this.sel) return { rows: [], nodes: this.Ls.map(function () { return []; }) };
    if (this.sel.row !== undefined) rows = [this.sel.row];
    else {
      var v = this.views[this.sel.side], g = v.graph, ids = [this.sel.node];
      g.items.forEach(function (it) { if (it[0] === self.sel.node && it[7]) ids = it[7]; });   /* group: its members */
      for (var n in g.node_item) if (g.node_item[n] === this.sel.node) ids.push(n);
      ids.forEach(function (n) { (self.rowsOf[self.sel.side][n] || []).forEach(function (r) { if (rows.indexOf(r) < 0) rows.push(r); }); });
    }
    var nodes = this.Ls.map(function (L, si) {
      var out = [];
      rows.forEach(function (ri) { sideNodes(self.cmp.rows[ri].sides[si]).forEach(function (n) { out.push(n); }); });
      if (self.sel.side === si && self.sel.node) out.push(self.sel.node);
      return out;
    });
    return { rows: rows, nodes: nodes };
  };
  function scrollWithin(el) {
    /* Bring `el` into view inside its nearest scrolling ancestor only (scrollIntoView also scrolls the
       window, which hid the page's static summary above the viewer on load). */
    var box = el.parentNode;
    while (box && box !== document.body && !(box.scrollHeight > box.clientHeight &&
           /(auto|scroll)/.test(getComputedStyle(box).overflowY))) box = box.parentNode;
    if (!box || box === document.body) return;
    var top = el.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
    if (top < box.scrollTop) box.scrollTop = top;
    else if (top + el.offsetHeight > box.scrollTop + box.clientHeight) box.scrollTop = top + el.offsetHeight - box.clientHeight;
  }
  CompareViewer.prototype.refresh = function (reveal, except) {
    var self = this, sel = this.selection();
    this.views.forEach(function (v, si) {
      var items = [];
      sel.nodes[si].forEach(function (n) { var it = v.item(n); if (it && items.indexOf(it) < 0) items.push(it); });
      v.setClass(items, "sel");
      v.setClass(sel.rows.length ? items : [], "match");
      if (reveal && items.length && si !== except) v.reveal(items, true);
      else if (reveal && items.length) v.reveal(items, false);
    });
    for (var ri in this.listItems) this.listItems[ri].classList.toggle("cur", sel.rows.indexOf(+ri) >= 0);
    var cur = sel.rows.length ? this.listItems[sel.rows[0]] : null;
    if (cur && reveal) scrollWithin(cur);   /* the list scrolls, never the page: the summary stays on the first screen */
    this.inspect(sel);
    var hs = { compare: true };
    if (this.sel && this.sel.row !== undefined) hs.row = this.sel.row;
    else if (this.sel) { hs.side = this.sel.side; hs.select = this.sel.node; }
    setHash(hs);
  };
  /* keep the other panes on what this one shows: the matched nodes of the item at its centre */
  CompareViewer.prototype.followViewport = function (si, src) {
    if (!this.sync || this._following) return;
    var it = src.centreItem(), self = this;
    if (!it) return;
    var rows = this.rowsOf[si][it] || [];
    if (!rows.length) return;
    this._following = true;
    this.views.forEach(function (v, sj) {
      if (sj === si) return;
      var items = [];
      rows.forEach(function (ri) { sideNodes(self.cmp.rows[ri].sides[sj]).forEach(function (n) { var x = v.item(n); if (x) items.push(x); }); });
      if (items.length) { v.t.k = src.t.k; v.reveal(items, true); }
    });
    this._following = false;
  };
  CompareViewer.prototype.inspect = function (sel) {
    var self = this, out = clear(this.rowInsp);
    if (!sel.rows.length && !this.sel) {
      out.appendChild(h("p", { cls: "dim hint", text: "Click a node in any graph, or an entry of “What changed”: the matched nodes are selected on every side (one op may have become several, or several one). Drag to pan (the other graphs follow the match), wheel to zoom." }));
      return;
    }
    if (!sel.rows.length) {
      out.appendChild(h("p", { cls: "dim", text: this.sel.node + " on " + this.cmp.sides[this.sel.side] + " has no match on the other sides." }));
    }
    sel.rows.slice(0, 3).forEach(function (ri) {
      var r = self.cmp.rows[ri];
      out.appendChild(h("div", { cls: "rowhead" }, h("b", { text: r.label }), h("span", { cls: "dim", text: (r.source ? "  " + r.source : "") + (r.weak ? "  · weak match (order, op, shape)" : "") })));
      var grid = h("div", { cls: "rowgrid" });
      r.sides.forEach(function (sd, si) {
        var cell = h("div", { cls: "rowcell" }, h("div", { cls: "ctitle" }, h("b", { text: self.cmp.sides[si] })));
        if (!sd) { cell.appendChild(h("p", { cls: "dim", text: "not on this side (" + (si === 0 ? "added" : "removed") + ")" })); grid.appendChild(cell); return; }
        var status = sd.status === "fallback" ? "fallback" + (sd.cat ? " · " + sd.cat : "") : sd.status + (sd.fused_into ? " into " + sd.fused_into : "");
        cell.appendChild(h("p", null, h("span", { cls: "badge k-" + sd.kind, text: status }),
                            sd.nodes.length ? h("span", { cls: "mono", text: " " + sd.nodes.join(", ") }) : h("span", { cls: "dim", text: " no node of its own" })));
        if (sd.why) cell.appendChild(h("div", { cls: "fbbox small" }, h("p", { text: sd.why }), sd.fix ? h("p", { cls: "fix", text: "Suggested change: " + sd.fix }) : null));
        cell.appendChild(table([sd.ops.length ? ["ops", h("span", { cls: "mono", text: sd.ops.join(", ") })] : null,
                                sd.shape ? ["output", "[" + sd.shape.join(",") + "]"] : null,
                                sd.q ? ["qparams", h("span", { cls: "q", text: sd.q })] : null,
                                sd.arena !== undefined && sd.arena !== null ? ["arena alive", bytes(sd.arena) + (sd.scratch ? ", scratch " + bytes(sd.scratch) : "")] : null,
                                sd.instr !== undefined && sd.instr !== null ? ["instructions", fmt(sd.instr)] : null,
                                sd.ms !== undefined && sd.ms !== null ? ["≈ ms (estimate)", Number(sd.ms).toFixed(3) + " ms"] : null,
                                sd.sqnr !== undefined && sd.sqnr !== null ? ["SQNR vs float", Number(sd.sqnr).toFixed(1) + " dB"] : null,
                                ["matched", sd.match || ""]]));
        var ch = (r.changes || [])[si];
        if (ch && ch.length) { var ul = h("ul", { cls: "ev" }); ch.forEach(function (c) { ul.appendChild(h("li", { text: c })); }); cell.appendChild(ul); }
        grid.appendChild(cell);
      });
      out.appendChild(grid);
    });
    if (sel.rows.length > 3) out.appendChild(h("p", { cls: "dim", text: "… and " + (sel.rows.length - 3) + " more matched row(s)" }));
  };

  /* ------------------------------------------------------------------ the page: tabs, hash, keys */
  var host = document.getElementById("viewer");
  var Ls = DATA.lowerings.map(function (b, i) { return new Lowering(b, i); });
  var tabs = h("div", { cls: "tabs" }), panels = [], current = null;
  host.appendChild(tabs);
  function addTab(title, build, id, tip) {
    var panel = h("div", { cls: "panel", id: "panel-" + id }), btn = h("button", { cls: "tab", text: title, title: tip || title, id: "tab-" + id });
    host.appendChild(panel);
    var entry = { btn: btn, panel: panel, build: build, obj: null };
    btn.addEventListener("click", function () { show(entry); });
    tabs.appendChild(btn);
    panels.push(entry);
    return entry;
  }
  function show(entry) {
    panels.forEach(function (p) { p.panel.style.display = p === entry ? "" : "none"; p.btn.classList.toggle("on", p === entry); });
    current = entry;
    if (!entry.obj) entry.obj = entry.build(entry.panel);
    entry.obj.activate();
    return entry.obj;
  }
  var cmpTab = null, lowTabs = [];
  if (DATA.compare) cmpTab = addTab("Compare " + DATA.compare.sides.length + " sides", function (p) { p.classList.add("cmp"); return new CompareViewer(p, Ls, DATA.compare); }, "compare", DATA.compare.sides.join(" · "));
  Ls.forEach(function (L, i) {
    if (!L.b.stages.length) { lowTabs.push(null); return; }
    var title = DATA.compare ? DATA.compare.sides[i].split(" ")[0] + " stages" : "Graph of each stage";
    lowTabs.push(addTab(title, function (p) { return new StageViewer(p, L, DATA.compare ? i : null); }, "lowering-" + i,
                        DATA.compare ? "every stage of " + DATA.compare.sides[i] : title));
  });
  if (panels.length < 2) tabs.style.display = "none";

  function route() {
    var q = parseHash();
    if (q.select || q.row !== undefined) host.scrollIntoView();   /* a deep link to a node shows it */
    if (q.compare && cmpTab) {
      var cv = show(cmpTab);
      if (q.row !== undefined) cv.pickRow(+q.row);
      else if (q.side !== undefined && q.select) cv.pickNode(+q.side, cv.views[+q.side].item(q.select) || q.select);
      return;
    }
    var li = q.lowering !== undefined ? +q.lowering : 0;
    var entry = (cmpTab && q.lowering === undefined && q.stage === undefined && q.select === undefined) ? cmpTab
              : lowTabs[li] || lowTabs.filter(function (t) { return t; })[0] || cmpTab;
    var v = show(entry);
    if (entry === cmpTab) return;
    var stage = q.stage !== undefined ? +q.stage : v.stage;
    if (q.select) v.go(stage, q.select, true);
    else v.setStage(stage);
  }
  window.addEventListener("hashchange", route);            /* a link to #select=... inside the page */
  window.addEventListener("keydown", function (ev) { if (current && current.obj && current.obj.key) current.obj.key(ev); });
  window.addEventListener("resize", function () { if (current && current.obj) (current.obj.views || [current.obj.view]).forEach(function (v) { v.fit(); }); });
  route();
  document.body.setAttribute("data-viewer", "ready");   /* the browser test waits for this */
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));   /* bench/html_report.py */
})();
