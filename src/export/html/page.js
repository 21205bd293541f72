// The Timeline HTML view (src/export/html.rs). Every element is built with createElement and
// textContent: no text from the timeline is ever parsed as markup. The conversation list is
// virtualised: items are grouped in chunks of CHUNK, and only the chunks near the screen hold
// elements; the others are empty boxes of their measured (or estimated) height.
(function () {
  "use strict";
  var CHUNK = 64;
  var D = JSON.parse(document.getElementById("timeline-data").textContent);
  var count = D.text.length + 1; // node numbers 0 (the root) .. count - 1
  var parent = new Int32Array(count);
  var time = new Float64Array(count);
  var depth = new Int32Array(count);
  var kids = new Int32Array(count); // number of children, then the start of each in childList
  var i, n;
  var t = 0;
  time[0] = NaN;
  for (n = 1; n < count; n++) {
    parent[n] = n - D.parent[n - 1];
    depth[n] = depth[parent[n]] + 1;
    kids[parent[n]]++;
    if (D.time[n - 1] === null) {
      time[n] = NaN;
    } else {
      t += D.time[n - 1];
      time[n] = t;
    }
  }
  var childStart = new Int32Array(count + 1);
  for (n = 0; n < count; n++) childStart[n + 1] = childStart[n] + kids[n];
  var childList = new Int32Array(Math.max(count - 1, 0));
  var fill = childStart.slice(0, count);
  for (n = 1; n < count; n++) childList[fill[parent[n]]++] = n;
  var ROLE = { u: "user", a: "assistant", s: "system", S: "summary", P: "placeholder" };
  function role(n) { return ROLE[D.role.charAt(n - 1)]; }
  function isSummary(n) { var r = D.role.charAt(n - 1); return r === "S" || r === "P"; }
  var pinned = new Uint8Array(count);
  D.pins.forEach(function (p) { pinned[p] = 1; });
  var cold = new Uint8Array(count);
  D.cold.forEach(function (c) { cold[c] = 1; });
  var intent = {};
  D.intent.forEach(function (e) { intent[e[0]] = { tag: e[1], note: e[2] }; });
  var summary = {};
  D.summary.forEach(function (e) {
    summary[e[0]] = { from: e[1], to: e[2], version: e[3], supersedes: e[4], supersededBy: e[5], derived: e[6], stale: e[7] === 1 };
  });

  // Branches: the current one first, then the others in order, then the archived ones. Each node
  // belongs to the first of them whose path holds it (its owner), so a side child opens its branch.
  var branches = [];
  D.branches.forEach(function (b) {
    var entry = { name: b[0], head: b[1], current: b[0] === D.current, archived: false };
    if (entry.current) branches.unshift(entry); else branches.push(entry);
  });
  D.archived.forEach(function (b) { branches.push({ name: b[0], head: b[1], current: false, archived: true }); });
  var owner = new Int32Array(count).fill(-1);
  var heads = {};
  branches.forEach(function (b, index) {
    (heads[b.head] = heads[b.head] || []).push(b);
    b.index = index;
    var x = b.head;
    while (x !== 0 && owner[x] === -1) { owner[x] = index; x = parent[x]; }
    // Where the branch leaves the path of an earlier one (0: it starts at the root).
    b.forkAt = x;
  });

  function id(n) { return "n" + n; }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function when(n) {
    if (isNaN(time[n])) return "";
    return new Date(time[n] * 1000).toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }

  // The page's frame.
  var top = el("header", "top");
  var title = el("h1", null, D.title === null ? "Timeline " + D.timeline : undefined);
  // The title in an isolate of its own: its bidirectional controls cannot reorder the ID after it.
  if (D.title !== null) title.append(el("bdi", null, D.title), " (" + D.timeline + ")");
  var search = el("input");
  search.id = "search";
  search.type = "search";
  search.placeholder = "Search messages ( / )";
  search.setAttribute("aria-label", "Search messages");
  var status = el("span");
  status.id = "status";
  status.setAttribute("aria-live", "polite");
  top.append(title, search, status);
  var layout = el("main", "layout");
  var side = el("nav");
  side.id = "side";
  side.setAttribute("aria-label", "Branches");
  var list = el("section");
  list.id = "list";
  list.setAttribute("aria-label", "Conversation");
  layout.append(side, list);
  var keys = el("footer", "keys");
  [["j", "/", "k", " next / previous message  "], ["[", " ", "]", " previous / next branch  "],
   ["o", "", "", " open the side branch forking here  "], ["/", "", "", " search  "],
   ["Esc", "", "", " clear the search"]].forEach(function (k) {
    keys.append(el("kbd", null, k[0]));
    if (k[2]) { keys.append(k[1]); keys.append(el("kbd", null, k[2])); }
    keys.append(k[3]);
  });
  document.body.append(top, layout, keys);

  // The sidebar: branches nested where they fork from each other (the shape of the tree).
  var branchButtons = [];
  function branchTree(archived) {
    var roots = el("ul");
    var items = {};
    branches.forEach(function (b) {
      if (b.archived !== archived) return;
      var li = el("li");
      var button = el("button", "branch", b.name);
      button.dataset.branch = String(b.index);
      button.title = "head " + id(b.head) + (b.forkAt ? ", forks at " + id(b.forkAt) : "");
      button.addEventListener("click", function () { clearSearch(); openBranch(b.index); });
      branchButtons[b.index] = button;
      li.append(button);
      if (b.current) li.append(el("span", "badge current", "current"));
      li.append(el("span", "count", " " + depth[b.head] + " msg" + (b.forkAt ? ", from " + id(b.forkAt) : "")));
      items[b.index] = li;
      var into = b.forkAt && owner[b.forkAt] !== b.index && items[owner[b.forkAt]];
      if (into) {
        var sub = into.querySelector("ul") || into.appendChild(el("ul"));
        sub.append(li);
      } else {
        roots.append(li);
      }
    });
    return roots;
  }
  side.append(el("h2", null, "Branches"), branchTree(false));
  if (D.archived.length) side.append(el("h2", null, "Archived branches"), branchTree(true));

  // The view: the items shown (node numbers), what kind of list it is, and the focused item.
  var view = { items: [], branch: -1, query: "", focus: -1, covered: null };
  var chunks = [];
  var observer = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      var c = chunks[entry.target.dataset.chunk];
      if (!c || c.box !== entry.target) return;
      if (entry.isIntersecting) renderChunk(c); else releaseChunk(c);
    });
  }, { root: list, rootMargin: "1200px 0px" });

  function estimate(n) { return 62 + 21 * Math.floor(D.text[n - 1].length / 90); }
  function setItems(items) {
    observer.disconnect();
    list.replaceChildren();
    chunks = [];
    view.items = items;
    if (!items.length) {
      list.append(el("p", "empty", view.query ? "No message matches." : "No messages on this branch yet."));
    }
    for (var start = 0; start < items.length; start += CHUNK) {
      var box = el("div", "chunk");
      box.dataset.chunk = String(chunks.length);
      var height = 0;
      for (var k = start; k < Math.min(start + CHUNK, items.length); k++) height += estimate(items[k]);
      box.style.height = height + "px";
      var c = { box: box, start: start, end: Math.min(start + CHUNK, items.length), rendered: false };
      chunks.push(c);
      list.append(box);
      observer.observe(box);
    }
  }
  function renderChunk(c) {
    if (c.rendered) return;
    c.rendered = true;
    var frag = document.createDocumentFragment();
    for (var k = c.start; k < c.end; k++) frag.append(card(view.items[k], k));
    c.box.replaceChildren(frag);
    c.box.style.height = "";
  }
  function releaseChunk(c) {
    if (!c.rendered) return;
    if (c.box.contains(document.activeElement)) return;
    c.box.style.height = c.box.offsetHeight + "px";
    c.box.replaceChildren();
    c.rendered = false;
  }

  function button(text, action) {
    var b = el("button", null, text);
    b.type = "button";
    b.addEventListener("click", function (event) { event.stopPropagation(); action(); });
    return b;
  }
  // Side children of n: the messages that fork from it away from the shown path.
  function forksOf(n, position) {
    var next = view.query ? -1 : view.items[position + 1];
    var out = [];
    for (var k = childStart[n]; k < childStart[n + 1]; k++) {
      var c = childList[k];
      if (c !== next && !isSummary(c)) out.push(c);
    }
    return out;
  }
  function card(n, position) {
    var r = role(n);
    var article = el("article", "msg " + r);
    article.dataset.node = id(n);
    article.dataset.index = String(position);
    article.tabIndex = -1;
    if (cold[n]) article.classList.add("cold");
    if (pinned[n]) article.classList.add("pinned");
    if (position === view.focus) article.classList.add("focused");
    if (view.covered && n >= view.covered[0] && n <= view.covered[1] && !isSummary(n)) article.classList.add("covered");
    var head = el("div", "head");
    head.append(el("span", "id", id(n)), el("span", "role", r));
    var s = summary[n];
    if (s) {
      if (r === "summary") head.append(el("span", "badge", "v" + s.version));
      head.append(el("span", "meta", "covers " + id(s.from) + ".." + id(s.to)));
      if (s.supersedes) head.append(el("span", "meta", "supersedes " + id(s.supersedes)));
      if (s.supersededBy) head.append(el("span", "badge", "superseded by " + id(s.supersededBy)));
      if (s.derived.length) head.append(el("span", "meta", "derived from " + s.derived.map(id).join(", ")));
      if (s.stale) head.append(el("span", "badge", "stale"));
    }
    var stamp = when(n);
    if (stamp) head.append(el("time", "meta", stamp));
    if (intent[n]) {
      var tag = el("span", "badge intent", intent[n].tag);
      if (intent[n].note !== null) tag.title = intent[n].note;
      head.append(tag);
      if (intent[n].note !== null) head.append(el("span", "meta", intent[n].note));
    }
    if (pinned[n]) head.append(el("span", "badge pin", "pinned"));
    if (cold[n]) head.append(el("span", "badge cold", "archived"));
    (heads[n] || []).forEach(function (b) { head.append(el("span", "badge" + (b.current ? " current" : ""), "head of " + b.name)); });
    if (view.query && owner[n] >= 0) head.append(el("span", "meta", "on " + branches[owner[n]].name));
    article.append(head, el("div", "text", D.text[n - 1]));
    var actions = el("div", "actions");
    if (s) {
      actions.append(button("originals " + id(s.from) + ".." + id(s.to), function () { showOriginals(n); }));
      if (s.supersedes) actions.append(button("older version " + id(s.supersedes), function () { openNode(s.supersedes); }));
      if (s.supersededBy) actions.append(button("newer version " + id(s.supersededBy), function () { openNode(s.supersededBy); }));
    }
    forksOf(n, position).forEach(function (c) {
      var b = owner[c] >= 0 ? branches[owner[c]] : null;
      actions.append(el("span", "fork", "\u2937 fork:"));
      var go = button((b ? b.name : "side branch") + " (" + id(c) + ")", function () { openNode(c); });
      go.className = "fork-link";
      go.dataset.node = id(c);
      actions.append(go);
    });
    if (view.query) actions.append(button("open in conversation", function () { clearSearch(); openNode(n); }));
    if (actions.childNodes.length) article.append(actions);
    article.addEventListener("click", function () { setFocus(position, false); });
    return article;
  }

  // The items of a branch view: the path root..head with, before each message, the summaries and
  // placeholders whose range starts there.
  function pathItems(head) {
    var path = [];
    for (var x = head; x !== 0; x = parent[x]) path.push(x);
    path.reverse();
    var items = [];
    var above = 0;
    path.forEach(function (x) {
      for (var k = childStart[above]; k < childStart[above + 1]; k++) {
        var c = childList[k];
        if (isSummary(c) && summary[c].from === x) items.push(c);
      }
      items.push(x);
      above = x;
    });
    return items;
  }
  function openBranch(index, focusNode) {
    var b = branches[index];
    view.branch = index;
    view.query = "";
    view.covered = null;
    branchButtons.forEach(function (button, k) { button.classList.toggle("selected", k === index); });
    var items = pathItems(b.head);
    setItems(items);
    status.textContent = b.name + (b.archived ? " (archived)" : "") + ": " + depth[b.head] + " messages";
    var at = focusNode ? items.indexOf(focusNode) : 0;
    setFocus(at >= 0 ? at : 0, true);
  }
  // Open the branch that holds n (a summary: the branch of the range it covers) with n focused.
  function openNode(n) {
    var anchor = isSummary(n) ? summary[n].from : n;
    var index = owner[anchor] >= 0 ? owner[anchor] : 0;
    if (view.query) clearSearch();
    openBranch(index, n);
  }
  function showOriginals(n) {
    var s = summary[n];
    if (view.query) { clearSearch(); openNode(n); }
    view.covered = [s.from, s.to];
    var at = view.items.indexOf(s.from);
    if (at < 0) { openNode(s.from); view.covered = [s.from, s.to]; at = view.items.indexOf(s.from); }
    chunks.forEach(function (c) { if (c.rendered) { c.rendered = false; renderChunk(c); } });
    setFocus(at, true);
  }

  function chunkOf(position) { return chunks[Math.floor(position / CHUNK)]; }
  function cardAt(position) {
    var c = chunkOf(position);
    if (!c) return null;
    renderChunk(c);
    return c.box.querySelector('[data-index="' + position + '"]');
  }
  function setFocus(position, scroll) {
    if (position < 0 || position >= view.items.length) return;
    var old = view.focus >= 0 ? cardAt(view.focus) : null;
    if (old) old.classList.remove("focused");
    view.focus = position;
    var now = cardAt(position);
    if (!now) return;
    now.classList.add("focused");
    if (scroll) {
      now.scrollIntoView({ block: "nearest" });
      now.focus({ preventScroll: true });
    }
  }

  // Search: every message of the timeline whose text holds the query (case ignored), in node order.
  var lower = null;
  var timer = 0;
  function runSearch() {
    var q = search.value.trim().toLowerCase();
    if (!q) { if (view.query) openBranch(view.branch >= 0 ? view.branch : 0); return; }
    if (!lower) lower = D.text.map(function (text) { return text.toLowerCase(); });
    var found = [];
    for (var k = 0; k < lower.length; k++) if (lower[k].indexOf(q) >= 0) found.push(k + 1);
    view.query = q;
    view.covered = null;
    setItems(found);
    status.textContent = found.length + (found.length === 1 ? " message matches" : " messages match") + " \u201c" + search.value.trim() + "\u201d";
    view.focus = -1;
    setFocus(0, false);
  }
  search.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(runSearch, 120); });
  search.addEventListener("keydown", function (event) {
    if (event.key === "Enter") { clearTimeout(timer); runSearch(); setFocus(0, true); }
    if (event.key === "Escape") { clearSearch(); list.focus(); }
  });
  function clearSearch() {
    clearTimeout(timer);
    if (!search.value && !view.query) return;
    search.value = "";
    if (view.query) openBranch(view.branch >= 0 ? view.branch : 0);
  }

  document.addEventListener("keydown", function (event) {
    if (event.target === search || event.ctrlKey || event.metaKey || event.altKey) return;
    var k = event.key;
    // Enter and space on a button press that button.
    if (event.target.tagName === "BUTTON" && (k === "Enter" || k === " ")) return;
    if (k === "j" || k === "ArrowDown") setFocus(view.focus + 1, true);
    else if (k === "k" || k === "ArrowUp") setFocus(view.focus - 1, true);
    else if (k === "Home" || k === "g") setFocus(0, true);
    else if (k === "End" || k === "G") setFocus(view.items.length - 1, true);
    else if (k === "]" || k === "[") {
      var step = k === "]" ? 1 : branches.length - 1;
      clearSearch();
      openBranch(((view.branch < 0 ? 0 : view.branch) + step) % branches.length);
    } else if (k === "o" || k === "Enter") {
      var card = cardAt(view.focus);
      var fork = card && card.querySelector(".fork-link");
      if (fork) fork.click(); else return;
    } else if (k === "/") search.focus();
    else if (k === "Escape") clearSearch();
    else return;
    event.preventDefault();
  });

  // Open at the requested message, else at the start of the current branch.
  if (branches.length === 0) {
    status.textContent = "This timeline has no branches.";
  } else if (D.start !== null) {
    openNode(D.start);
  } else {
    openBranch(0);
  }
  document.documentElement.dataset.ready = String(Math.round(performance.now()));
})();
