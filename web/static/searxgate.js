// searxgate.js: what the page does with a script, each part only when
// chosen on /preferences (the <html> element's data-* attributes say
// which): suggestions as you type, vim-style hotkeys, infinite scroll;
// and on a page of images, the keyboard in an image's detail.
// Every page works fully without it; it is served by searxgate itself
// (CSP script-src 'self') and talks to nothing but searxgate.
(function () {
  "use strict";
  var root = document.documentElement;
  var opts = root.dataset;

  // Suggestions as you type. Each instance allows autocompletion only a
  // small budget, so: nothing below MIN_LEN characters, one request per
  // pause in typing (DEBOUNCE_MS), every answer cached for the page's
  // life, at most one request in flight, and after a refusal (429) or a
  // failure a quiet pause before asking again.
  var MIN_LEN = 3, DEBOUNCE_MS = 350, MAX_SHOWN = 8;
  function autocomplete(input) {
    var form = input.form;
    var list = document.createElement("ul");
    list.id = "ac-list";
    list.className = "ac";
    list.setAttribute("role", "listbox");
    list.setAttribute("aria-label", "Suggestions");
    list.hidden = true;
    input.insertAdjacentElement("afterend", list);
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-controls", list.id);
    input.setAttribute("aria-expanded", "false");
    var cache = new Map(), timer = 0, inflight = null, quietUntil = 0, active = -1, shownFor = "";

    function language() {
      var sel = form.querySelector('select[name="language"]');
      return sel ? sel.value : "";
    }
    function close() {
      list.hidden = true;
      list.textContent = "";
      active = -1;
      shownFor = "";
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
    }
    function choose(text) {
      input.value = text;
      close();
      if (form.requestSubmit) { form.requestSubmit(); } else { form.submit(); }
    }
    function show(q, items) {
      if (input.value.trim() !== q || document.activeElement !== input) { return; }
      list.textContent = "";
      active = -1;
      items = items.slice(0, MAX_SHOWN);
      if (items.length === 0) { close(); return; }
      items.forEach(function (text, i) {
        var li = document.createElement("li");
        li.id = "ac-" + i;
        li.setAttribute("role", "option");
        li.setAttribute("aria-selected", "false");
        li.textContent = text;
        li.addEventListener("mousedown", function (e) { e.preventDefault(); choose(text); });
        list.appendChild(li);
      });
      shownFor = q;
      list.hidden = false;
      input.setAttribute("aria-expanded", "true");
    }
    function move(by) {
      var items = list.children;
      if (list.hidden || items.length === 0) { return false; }
      if (active >= 0) { items[active].setAttribute("aria-selected", "false"); }
      // -1 is the box itself: the choices cycle through it.
      active = (active + 1 + by + items.length + 1) % (items.length + 1) - 1;
      if (active < 0) {
        input.removeAttribute("aria-activedescendant");
        return true;
      }
      items[active].setAttribute("aria-selected", "true");
      input.setAttribute("aria-activedescendant", items[active].id);
      return true;
    }
    function ask() {
      var q = input.value.trim();
      if (q.length < MIN_LEN) { close(); return; }
      var key = language() + "\u0000" + q;
      if (cache.has(key)) { show(q, cache.get(key)); return; }
      if (Date.now() < quietUntil) { return; }
      if (inflight) { inflight.abort(); }
      var ctl = new AbortController();
      inflight = ctl;
      var url = "/autocompleter?q=" + encodeURIComponent(q);
      var lang = language();
      if (lang) { url += "&language=" + encodeURIComponent(lang); }
      fetch(url, { headers: { "X-Requested-With": "XMLHttpRequest", "Accept": "application/json" }, signal: ctl.signal, credentials: "same-origin" })
        .then(function (r) {
          if (!r.ok) {
            var secs = parseInt(r.headers.get("Retry-After") || "", 10);
            quietUntil = Date.now() + 1000 * (secs > 0 ? Math.min(secs, 300) : 20);
            return null;
          }
          return r.json();
        })
        .then(function (items) {
          if (inflight === ctl) { inflight = null; }
          if (!Array.isArray(items)) { return; }
          items = items.filter(function (x) { return typeof x === "string" && x !== ""; });
          cache.set(key, items);
          show(q, items);
        })
        .catch(function () {
          if (inflight === ctl) { inflight = null; }
        });
    }
    input.addEventListener("input", function () {
      clearTimeout(timer);
      if (input.value.trim() !== shownFor) { close(); }
      timer = setTimeout(ask, DEBOUNCE_MS);
    });
    input.addEventListener("keydown", function (e) {
      if (e.key === "ArrowDown") {
        if (move(1)) { e.preventDefault(); }
      } else if (e.key === "ArrowUp") {
        if (move(-1)) { e.preventDefault(); }
      } else if (e.key === "Escape") {
        if (!list.hidden) { e.preventDefault(); close(); }
      } else if (e.key === "Enter" && active >= 0 && !list.hidden) {
        e.preventDefault();
        choose(list.children[active].textContent);
      }
    });
    input.addEventListener("blur", function () { setTimeout(close, 0); });
  }

  // Vim-style hotkeys: j/k the next/previous result, o or Enter opens
  // it, / the search box, n/p the next/previous page, h this help; Escape
  // closes an image's detail. Never while typing in a field.
  function hotkeys() {
    var current = -1;
    var help = null;
    function results() { return document.querySelectorAll("article.result"); }
    function select(i) {
      var rs = results();
      if (rs.length === 0) { return; }
      if (current >= 0 && rs[current]) { rs[current].classList.remove("hotkey-current"); }
      current = Math.max(0, Math.min(rs.length - 1, i));
      rs[current].classList.add("hotkey-current");
      var a = rs[current].querySelector("h3 a");
      if (a) { a.focus(); } else { rs[current].scrollIntoView({ block: "nearest" }); }
    }
    function follow(sel) {
      var a = document.querySelector(sel);
      if (a) { location.href = a.href; }
    }
    function toggleHelp() {
      if (help) { help.remove(); help = null; return; }
      help = document.createElement("section");
      help.className = "answer hotkeyhelp";
      help.setAttribute("role", "dialog");
      help.setAttribute("aria-label", "Keyboard shortcuts");
      var h = document.createElement("h2");
      h.textContent = "Keyboard shortcuts";
      help.appendChild(h);
      var dl = document.createElement("dl");
      [["j / k", "next / previous result"], ["o or Enter", "open the result"], ["/", "the search box"],
        ["n / p", "next / previous page"], ["Escape", "close an image"], ["h", "show or hide this help"]].forEach(function (kv) {
        var dt = document.createElement("dt"), dd = document.createElement("dd");
        dt.textContent = kv[0];
        dd.textContent = kv[1];
        dl.appendChild(dt);
        dl.appendChild(dd);
      });
      help.appendChild(dl);
      var main = document.getElementById("main") || document.body;
      main.insertBefore(help, main.firstChild);
    }
    document.addEventListener("keydown", function (e) {
      var t = e.target;
      if (e.ctrlKey || e.metaKey || e.altKey || (t && (t.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(t.tagName)))) { return; }
      switch (e.key) {
        case "j": select(current + 1); break;
        case "k": select(current - 1); break;
        case "o": if (current >= 0) { var a = results()[current].querySelector("h3 a"); if (a) { a.click(); } } break;
        case "/": var q = document.querySelector('input[name="q"]'); if (q) { q.focus(); q.select(); } break;
        case "n": follow('a[rel="next"]'); break;
        case "p": follow('a[rel="prev"]'); break;
        case "h": toggleHelp(); break;
        default: return;
      }
      e.preventDefault();
    });
  }

  // An image's detail, with or without hotkeys: opening it (a thumbnail,
  // a Previous/Next link, the address) moves the keyboard into it, so
  // that Tab reaches its Close link and a screen reader reads it; Escape
  // closes it (its Close link); the arrow keys go to the previous and next
  // image, in the detail and in the grid. Never while typing in a field.
  function imageKeys() {
    function openDetail() {
      if (!/^#image-\d+$/.test(location.hash)) { return null; }
      return document.getElementById(location.hash.slice(1));
    }
    function focusDetail() {
      var d = openDetail();
      if (d) { d.focus({ preventScroll: true }); }
    }
    window.addEventListener("hashchange", focusDetail);
    focusDetail();
    document.addEventListener("keydown", function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey || /^(INPUT|TEXTAREA|SELECT)$/.test((e.target || {}).tagName || "")) { return; }
      var d = openDetail();
      if (e.key === "Escape") {
        var close = d && d.querySelector("a.close");
        if (close) { e.preventDefault(); close.click(); }
        return;
      }
      if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") { return; }
      var step = e.key === "ArrowRight" ? 1 : -1;
      if (d) {
        var next = document.getElementById("image-" + (Number(d.id.slice(6)) + step));
        if (next) { e.preventDefault(); location.hash = "#" + next.id; }
        return;
      }
      var cell = e.target && e.target.classList && e.target.classList.contains("imagelink") ? e.target : null;
      var to = cell && document.getElementById("i" + (Number(cell.id.slice(1)) + step));
      if (to) { e.preventDefault(); to.focus(); }
    });
  }

  // Infinite scroll: when the page's end comes into view, the next page's
  // results are fetched (from searxgate, as the "Next" link would) and
  // added, and the page links with them.
  function infiniteScroll() {
    if (!("IntersectionObserver" in window)) { return; }
    var loading = false;
    var obs = new IntersectionObserver(function (entries) {
      if (loading || !entries.some(function (e) { return e.isIntersecting; })) { return; }
      var nav = document.querySelector("nav.pages");
      var next = nav && nav.querySelector('a[rel="next"]');
      if (!next) { obs.disconnect(); return; }
      loading = true;
      fetch(next.href, { credentials: "same-origin" }).then(function (r) { return r.ok ? r.text() : null; }).then(function (html) {
        loading = false;
        if (!html) { obs.disconnect(); return; }
        var doc = new DOMParser().parseFromString(html, "text/html");
        var found = doc.querySelectorAll("article.result");
        found.forEach(function (a) { nav.parentNode.insertBefore(document.adoptNode(a), nav); });
        var newNav = doc.querySelector("nav.pages");
        if (found.length === 0 || !newNav) { obs.disconnect(); nav.remove(); return; }
        nav.replaceWith(document.adoptNode(newNav));
        obs.disconnect();
        obs.observe(document.querySelector("nav.pages"));
      }).catch(function () { loading = false; obs.disconnect(); });
    }, { rootMargin: "400px" });
    var nav = document.querySelector("nav.pages");
    if (nav) { obs.observe(nav); }
  }

  function start() {
    var q = document.querySelector('form.searchform input[name="q"]');
    if (opts.autocomplete === "1" && q) { autocomplete(q); }
    if (opts.hotkeys === "vim") { hotkeys(); }
    if (opts.infiniteScroll === "1") { infiniteScroll(); }
    if (document.getElementById("imagegrid")) { imageKeys(); }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
