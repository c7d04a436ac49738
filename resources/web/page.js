/*
 * Shard Lab's deck as a web page (written by app/deck/web_export.py; reads data.js).
 *
 * Keys: → or Space the next step (past a scene's last, the next scene), ← or Shift+Space back;
 * PageDown / PageUp the next / previous scene (a clicker sends these); Home / End the first / last
 * scene; K or P play / pause. The address says where one is (#scene=5&step=3&lang=zh: the deck's
 * scene 5, after 3 steps, in Chinese) and follows every step, so a link opens exactly there.
 *
 * The deck's words are someone else's text: they reach the page only as text nodes and
 * textContent, never as HTML, so "<script>" in a title is shown, not run.
 */
"use strict";

(function () {
  var DECK = window.SHARD_LAB_DECK;
  var PLAY_MS = 800; // one step every 0.8 s, as the app plays a ring step at 1×
  var TAGS = { p: 1, b: 1, i: 1, em: 1, strong: 1, sub: 1, sup: 1, br: 1, span: 1, ul: 1, ol: 1, li: 1,
               code: 1, small: 1, table: 1, tr: 1, td: 1, th: 1 };
  var WORDS = {
    en: { scenes: "Scenes", play: "Play", pause: "Pause", prev: "Previous step", next: "Next step",
          other: "中文", otherTitle: "切换到中文", formula: "Formula", points: "Talking points",
          numbers: "Numbers", where: "Scene {i} of {N} · step {k} of {K}", total: "Whole run",
          colls: "collectives", moved: "bytes moved", op: "Collective", size: "S", time: "time",
          busbw: "bus bandwidth", alt: "{title}: the picture after step {k} of {K}",
          keys: "← → Space: step · PageUp / PageDown: scene · Home / End: first / last scene · K: play / pause",
          skipped: "Skipped: ", empty: "This deck has no scene to show." },
    zh: { scenes: "场景", play: "播放", pause: "暂停", prev: "上一步", next: "下一步",
          other: "English", otherTitle: "Switch to English", formula: "公式", points: "要点",
          numbers: "数字", where: "场景 {i} / {N} · 第 {k} / {K} 步", total: "整个运行",
          colls: "次集合通信", moved: "已传字节", op: "集合通信", size: "S", time: "时间",
          busbw: "总线带宽", alt: "{title}：第 {k} / {K} 步之后的画面",
          keys: "← → 空格：单步 · PageUp / PageDown：换场景 · Home / End：第一个 / 最后一个场景 · K：播放 / 暂停",
          skipped: "已跳过：", empty: "这份讲稿没有可显示的场景。" }
  };
  var state = { s: 0, k: 0, lang: "en", timer: null };
  var el = {};

  function fmt(text, args) {
    return text.replace(/\{(\w+)\}/g, function (m, key) { return key in args ? String(args[key]) : m; });
  }
  function words() { return WORDS[state.lang] || WORDS.en; }
  function pick(text) { // a deck text {en, zh}: Chinese when it has one
    return (state.lang === "zh" && text.zh) ? text.zh : text.en;
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  // The app's rich text arrives as [tag, class, children] trees of a few plain tags: built here
  // element by element, strings as text nodes. An unknown tag becomes a span; no attributes exist.
  function build(parent, nodes) {
    for (var j = 0; j < nodes.length; j++) {
      var n = nodes[j];
      if (typeof n === "string") {
        parent.appendChild(document.createTextNode(n));
      } else if (Array.isArray(n)) {
        var e = document.createElement(TAGS.hasOwnProperty(n[0]) ? n[0] : "span");
        if (typeof n[1] === "string" && /^[a-z ]*$/.test(n[1]) && n[1]) e.className = n[1];
        if (Array.isArray(n[2])) build(e, n[2]);
        parent.appendChild(e);
      }
    }
  }

  function scene() { return DECK.scenes[state.s]; }
  function steps(sc) { return sc.steps[state.lang] || sc.steps[DECK.langs[0]]; }

  // -- where we are -------------------------------------------------------------------------
  function go(s, k, lang, keepPlaying) {
    var N = DECK.scenes.length;
    s = Math.max(0, Math.min(N - 1, s | 0));
    if (lang && WORDS[lang] && DECK.langs.indexOf(lang) >= 0) state.lang = lang;
    var K = steps(DECK.scenes[s]).length - 1;
    k = Math.max(0, Math.min(K, k | 0));
    var changedScene = s !== state.s || !el.sceneTitle.firstChild;
    state.s = s;
    state.k = k;
    if (!keepPlaying) stop();
    show(changedScene);
    var hash = "#scene=" + scene().number + "&step=" + k + "&lang=" + state.lang;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  function show(changedScene) {
    var w = words(), sc = scene(), st = steps(sc), f = st[state.k], K = st.length - 1;
    document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
    document.title = pick(sc.title) + " — " + pick(DECK.title);
    el.deckTitle.textContent = pick(DECK.title);
    el.sceneTitle.textContent = sc.number + ". " + pick(sc.title);
    if (el.frame.getAttribute("src") !== f.img) {
      el.frame.setAttribute("src", f.img);
      el.frameLink.setAttribute("href", f.img); // the picture at full size, for a small screen's zoom
    }
    var size = DECK.sizes[f.img];
    if (size) { el.frame.width = size[0]; el.frame.height = size[1]; }
    el.frame.alt = fmt(w.alt, { title: pick(sc.title), k: state.k, K: K });
    el.status.textContent = f.status.filter(function (x) { return x; }).join(" · ");
    el.live.textContent = f.live;
    clear(el.explain); build(el.explain, f.explain);
    clear(el.formula); build(el.formula, DECK.formulas[f.formula] || []);
    el.where.textContent = fmt(w.where, { i: state.s + 1, N: DECK.scenes.length, k: state.k, K: K });
    clear(el.points);
    sc.points.forEach(function (p) {
      var li = document.createElement("li");
      li.textContent = pick(p);
      el.points.appendChild(li);
    });
    numbers(sc);
    chrome();
    var items = el.list.children;
    for (var j = 0; j < items.length; j++) {
      var b = items[j].firstChild;
      if (j === state.s) b.setAttribute("aria-current", "step"); else b.removeAttribute("aria-current");
      b.textContent = DECK.scenes[j].number + ". " + pick(DECK.scenes[j].title);
    }
    if (changedScene && items[state.s]) {
      var nav = el.nav, item = items[state.s];
      if (item.offsetTop < nav.scrollTop || item.offsetTop + item.offsetHeight > nav.scrollTop + nav.clientHeight) {
        nav.scrollTop = item.offsetTop - nav.clientHeight / 3;
      }
    }
    preload();
  }

  function numbers(sc) {
    var w = words(), n = sc.numbers, box = el.numbers, t = document.createElement("table");
    clear(box);
    var total = document.createElement("p"), b = document.createElement("b");
    b.textContent = w.total + ": ";
    total.appendChild(b);
    total.appendChild(document.createTextNode(n.time + " · " + n.collectives + " " + w.colls + " · " + n.moved + " " + w.moved));
    box.appendChild(total);
    function row(cells, head) {
      var tr = document.createElement("tr");
      cells.forEach(function (c) {
        var td = document.createElement(head ? "th" : "td");
        td.textContent = c;
        tr.appendChild(td);
      });
      t.appendChild(tr);
    }
    if (n.rows.length) {
      row([w.op, "n", w.size, w.time, w.busbw], true);
      n.rows.forEach(function (r) { row([r.op + " (" + r.algo + ")", String(r.n), r.bytes, r.time, r.busbw], false); });
      box.appendChild(t);
    }
  }

  function chrome() {
    var w = words();
    el.toggle.textContent = "☰ " + w.scenes;
    el.prev.textContent = "◀"; el.prev.title = w.prev; el.prev.setAttribute("aria-label", w.prev);
    el.next.textContent = "▶"; el.next.title = w.next; el.next.setAttribute("aria-label", w.next);
    var playing = state.timer !== null;
    el.play.textContent = playing ? "❚❚ " + w.pause : "► " + w.play;
    el.play.setAttribute("aria-pressed", playing ? "true" : "false");
    el.lang.textContent = w.other; el.lang.title = w.otherTitle;
    el.lang.setAttribute("lang", state.lang === "zh" ? "en" : "zh-CN");
    el.hFormula.textContent = w.formula;
    el.hPoints.textContent = w.points;
    el.hNumbers.textContent = w.numbers;
    el.keys.textContent = w.keys;
    el.nav.setAttribute("aria-label", w.scenes);
    el.skipped.textContent = (DECK.skipped || []).length ? w.skipped + DECK.skipped.join(" ") : "";
  }

  var decoded = {}; // picture -> an Image kept decoded, so a step only swaps pixels already in memory
  function preload() { // the next and previous pictures (the next scene's first at a scene's end)
    var st = steps(scene()), want = [];
    [state.k + 1, state.k - 1].forEach(function (k) { if (k >= 0 && k < st.length) want.push(st[k].img); });
    if (state.k === st.length - 1 && state.s + 1 < DECK.scenes.length) want.push(steps(DECK.scenes[state.s + 1])[0].img);
    var keep = {};
    want.concat([st[state.k].img]).forEach(function (src) {
      var im = decoded[src];
      if (!im) {
        im = new Image();
        im.src = src;
        if (im.decode) im.decode().catch(function () { /* a picture that failed shows as missing */ });
      }
      keep[src] = im;
    });
    decoded = keep;
  }

  // -- moving -------------------------------------------------------------------------------
  function step(d) {
    var K = steps(scene()).length - 1;
    if (d > 0 && state.k >= K) {
      if (state.s < DECK.scenes.length - 1) go(state.s + 1, 0);
    } else if (d < 0 && state.k <= 0) {
      if (state.s > 0) go(state.s - 1, steps(DECK.scenes[state.s - 1]).length - 1);
    } else {
      go(state.s, state.k + d);
    }
  }
  function toScene(s) { // a scene opens at its own step, as the app's deck opens it
    s = Math.max(0, Math.min(DECK.scenes.length - 1, s));
    go(s, DECK.scenes[s].start);
  }

  function play() {
    var K = steps(scene()).length - 1;
    if (K <= 0) return;
    if (state.k >= K) go(state.s, 0);
    state.timer = setInterval(function () {
      if (state.k >= steps(scene()).length - 1) { stop(); return; }
      go(state.s, state.k + 1, null, true);
    }, PLAY_MS);
    chrome();
  }
  function stop() {
    if (state.timer !== null) { clearInterval(state.timer); state.timer = null; }
    if (el.play) chrome();
  }
  function toggle() { if (state.timer !== null) stop(); else play(); }

  function onKey(e) {
    if (e.ctrlKey || e.altKey || e.metaKey) return;
    var t = e.target && e.target.tagName;
    if (t === "INPUT" || t === "SELECT" || t === "TEXTAREA") return;
    var handled = true;
    switch (e.key) {
      case "ArrowRight": step(1); break;
      case "ArrowLeft": step(-1); break;
      case " ": case "Spacebar": step(e.shiftKey ? -1 : 1); break;
      case "PageDown": toScene(state.s + 1); break;
      case "PageUp": toScene(state.s - 1); break;
      case "Home": toScene(0); break;
      case "End": toScene(DECK.scenes.length - 1); break;
      case "k": case "K": case "p": case "P": toggle(); break;
      default: handled = false;
    }
    if (handled) e.preventDefault();
  }

  // -- the address ------------------------------------------------------------------------
  function parseHash() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var p = kv.split("=");
      if (p.length === 2) out[decodeURIComponent(p[0])] = decodeURIComponent(p[1]);
    });
    return out;
  }
  function fromHash() {
    var h = parseHash(), s = 0;
    if (h.scene !== undefined) { // the deck's scene number (a skipped scene keeps its number out)
      var want = parseInt(h.scene, 10);
      for (s = 0; s < DECK.scenes.length - 1 && DECK.scenes[s].number < want; s++) { /* find it */ }
    }
    var k = h.step !== undefined && /^\d+$/.test(h.step) ? parseInt(h.step, 10) : DECK.scenes[s].start;
    go(s, k, h.lang || state.lang);
  }

  // -- start --------------------------------------------------------------------------------
  function start() {
    ["deck-title", "scene-title", "frame", "frame-link", "status", "live", "explain", "formula", "points", "numbers",
     "where", "prev", "play", "next", "lang", "keys", "scene-list", "scene-nav", "scenes-toggle",
     "h-formula", "h-points", "h-numbers", "skipped"].forEach(function (id) {
      el[id.replace(/-(\w)/g, function (m, c) { return c.toUpperCase(); })] = document.getElementById(id);
    });
    el.list = el.sceneList; el.nav = el.sceneNav; el.toggle = el.scenesToggle;
    if (!DECK || !DECK.scenes || !DECK.scenes.length) {
      document.getElementById("main").textContent = WORDS.en.empty;
      return;
    }
    var nav = navigator.language || "en";
    state.lang = DECK.langs.indexOf("zh") >= 0 && /^zh/i.test(nav) ? "zh" : DECK.langs[0];
    DECK.scenes.forEach(function (sc, j) {
      var li = document.createElement("li"), b = document.createElement("button");
      b.type = "button";
      b.addEventListener("click", function () { toScene(j); closeNav(); });
      li.appendChild(b);
      el.list.appendChild(li);
    });
    el.prev.addEventListener("click", function () { step(-1); });
    el.next.addEventListener("click", function () { step(1); });
    el.play.addEventListener("click", toggle);
    el.lang.hidden = DECK.langs.length < 2; // a page exported in one language has no other to switch to
    el.lang.addEventListener("click", function () {
      go(state.s, state.k, state.lang === "zh" ? "en" : "zh", state.timer !== null);
    });
    el.toggle.addEventListener("click", function () {
      var open = document.body.classList.toggle("nav-open");
      el.toggle.setAttribute("aria-expanded", open ? "true" : "false");
    });
    el.frame.addEventListener("load", function first() { // when the page is first readable (benchmarks/web_page.py)
      el.frame.removeEventListener("load", first);
      if (window.performance && performance.mark) performance.mark("shard-lab-first-frame");
    });
    document.addEventListener("keydown", onKey);
    window.addEventListener("hashchange", fromHash);
    fromHash();
  }
  function closeNav() {
    document.body.classList.remove("nav-open");
    el.toggle.setAttribute("aria-expanded", "false");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
