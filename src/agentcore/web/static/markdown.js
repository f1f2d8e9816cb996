// A small, safe Markdown renderer. The text is parsed into a tree of plain objects
// ({tag, attrs, children} and strings), which is then either built as DOM nodes (`renderInto`:
// createElement and text nodes only, never innerHTML) or written as escaped HTML (`render`, for
// tests and tools). Model text is only ever text: a <script> shows as written.
// Supports fenced code (with a copy button in the page), headings, nested lists (by indentation),
// GFM tables (with alignment), block quotes, paragraphs, `code`, **bold**, *italic*, and links
// to http(s) and mailto addresses (others show as text), opening in a new tab without an opener.
// Rendering is bounded: no step recurses more than the text's nesting (itself capped), a text
// past LIMITS.chars or one whose tree would pass LIMITS.nodes is shown as plain text instead, and
// a failure rendering one text shows that text as plain text (the rest of the page goes on).
"use strict";
(function () {
  const LIMITS = {
    chars: 200000, // a longer text is shown as plain text, unparsed
    nodes: 20000,  // elements in one text's tree: past it, the text is shown as plain text
    inline: 8,     // emphasis inside emphasis, deeper: shown as written
    lists: 8,      // lists inside lists, deeper: items join the deepest list
  };

  // Bidi embedding, override and isolate marks reorder what follows them (a file name that
  // reads "txt.exe" backwards): shown as their escape, `\u202e`, as the terminal shows them. A
  // NUL shows as the replacement character.
  const HIDDEN = /[\u0000\u202a-\u202e\u2066-\u2069]/g;

  function visibleChar(c) {
    return c === "\u0000" ? "\uFFFD" : "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
  }

  /** `text` as the page shows it: bidi marks as `\u202e` escapes, a NUL as U+FFFD. */
  function visible(text) {
    const s = String(text);
    HIDDEN.lastIndex = 0;
    return HIDDEN.test(s) ? s.replace(HIDDEN, visibleChar) : s;
  }

  function escapeHtml(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }

  // Thrown when a text's tree would pass LIMITS.nodes: the text is then shown as plain text.
  function TooBig() { this.message = "too many elements to format"; }
  let budget = LIMITS.nodes;

  function node(tag, children, attrs) {
    if (--budget < 0) throw new TooBig();
    return { tag: tag, attrs: attrs || null, children: children || [] };
  }

  // -- inline -----------------------------------------------------------------------------

  // Each rule's inner text is group 1. Where two rules match at the same place, the first wins.
  const EMPHASIS = [
    { re: /\*\*(\S(?:[^\n]*?\S)?)\*\*/g, tag: "strong" },
    { re: /(?<!\w)__(\S(?:[^\n]*?\S)?)__(?!\w)/g, tag: "strong" },
    { re: /(?<![*\w])\*([^*\s](?:[^*\n]*[^*\s])?)\*(?!\*)/g, tag: "em" },
    { re: /(?<![_\w])_([^_\n]+)_(?!\w)/g, tag: "em" },
  ];

  // Emphasis, left to right: the leftmost match of any rule, its inner text formatted one
  // level deeper, then on after it. Each rule's next match is kept until the text passes it, so
  // the text is searched about once per rule, however many matches it holds.
  function emphasis(text, depth) {
    if (!text) return [];
    if (depth >= LIMITS.inline) return [text];
    const out = [];
    const next = EMPHASIS.map(function () { return undefined; }); // undefined: not searched
    let pos = 0;
    for (;;) {
      let best = -1;
      for (let k = 0; k < EMPHASIS.length; k++) {
        if (next[k] === undefined || (next[k] !== null && next[k].index < pos)) {
          EMPHASIS[k].re.lastIndex = pos;
          next[k] = EMPHASIS[k].re.exec(text);
        }
        if (next[k] !== null && (best < 0 || next[k].index < next[best].index)) best = k;
      }
      if (best < 0) break;
      const m = next[best];
      if (m.index > pos) out.push(text.slice(pos, m.index));
      out.push(node(EMPHASIS[best].tag, emphasis(m[1], depth + 1)));
      pos = m.index + m[0].length;
    }
    if (pos < text.length) out.push(text.slice(pos));
    return out;
  }

  const LINK = /\[([^\]\n]+)\]\(((?:https?:\/\/|mailto:)[^\s()]+)\)/g;

  function links(text) {
    const out = [];
    let pos = 0;
    LINK.lastIndex = 0;
    for (let m = LINK.exec(text); m !== null; m = LINK.exec(text)) {
      const end = LINK.lastIndex;
      for (const n of emphasis(text.slice(pos, m.index), 0)) out.push(n);
      out.push(node("a", emphasis(m[1], 0),
        { href: m[2], target: "_blank", rel: "noopener noreferrer" }));
      pos = LINK.lastIndex = end; // emphasis searched other expressions meanwhile: LINK is ours
    }
    for (const n of emphasis(text.slice(pos), 0)) out.push(n);
    return out;
  }

  function inline(text) {
    const out = [];
    text.split(/(`[^`\n]+`)/).forEach(function (part, i) {
      if (i % 2 === 1) out.push(node("code", [part.slice(1, -1)]));
      else for (const n of links(part)) out.push(n);
    });
    return out;
  }

  function joinLines(lines) {
    const out = [];
    lines.forEach(function (line, i) {
      if (i) out.push(node("br"));
      for (const n of inline(line)) out.push(n);
    });
    return out;
  }

  // -- blocks -----------------------------------------------------------------------------

  const ITEM = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/;
  const DELIMITER = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

  function cells(line) {
    let s = line.trim();
    if (s.startsWith("|")) s = s.slice(1);
    if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
    const out = [];
    let cell = "";
    for (let i = 0; i < s.length; i++) {
      if (s[i] === "\\" && s[i + 1] === "|") { cell += "|"; i++; }
      else if (s[i] === "|") { out.push(cell.trim()); cell = ""; }
      else cell += s[i];
    }
    out.push(cell.trim());
    return out;
  }

  function isTableStart(lines, i) {
    return lines[i].indexOf("|") >= 0 && i + 1 < lines.length &&
      lines[i + 1].indexOf("-") >= 0 && DELIMITER.test(lines[i + 1]) &&
      (lines[i + 1].indexOf("|") >= 0 || cells(lines[i]).length === 1);
  }

  function table(lines, i) {
    const head = cells(lines[i]);
    const align = cells(lines[i + 1]).map(function (c) {
      const left = c.startsWith(":"), right = c.endsWith(":");
      return left && right ? "center" : right ? "right" : left ? "left" : null;
    });
    function row(values, tag) {
      return node("tr", head.map(function (_h, k) {
        return node(tag, inline(values[k] || ""), align[k] ? { class: "align-" + align[k] } : null);
      }));
    }
    const body = [];
    let j = i + 2;
    while (j < lines.length && lines[j].trim() && lines[j].indexOf("|") >= 0) {
      body.push(row(cells(lines[j]), "td"));
      j++;
    }
    const parts = [node("thead", [row(head, "th")])];
    if (body.length) parts.push(node("tbody", body));
    return { block: node("table", parts), next: j };
  }

  function list(lines, i) {
    // a stack of open lists, each {indent, el}; an item indented past its list's items nests
    const root = [];
    const stack = [];
    let j = i;
    for (; j < lines.length; j++) {
      const m = ITEM.exec(lines[j]);
      if (!m) {
        const open = stack[stack.length - 1];
        const last = open && open.el.children[open.el.children.length - 1];
        if (last && lines[j].trim() && /^\s+/.test(lines[j])) { // a continuation line
          last.children.push(" ");
          for (const n of inline(lines[j].trim())) last.children.push(n);
          continue;
        }
        break;
      }
      const indent = m[1].replace(/\t/g, "    ").length;
      const tag = /\d/.test(m[2]) ? "ol" : "ul";
      while (stack.length && indent < stack[stack.length - 1].indent) stack.pop();
      let top = stack[stack.length - 1];
      if (top && indent > top.indent + 1 && top.el.children.length &&
          stack.length < LIMITS.lists) {
        const parent = top.el.children[top.el.children.length - 1];
        top = { indent: indent, el: node(tag) };
        parent.children.push(top.el);
        stack.push(top);
      } else if (!top || top.el.tag !== tag) {
        const fresh = { indent: top ? top.indent : indent, el: node(tag) };
        if (stack.length > 1) {
          stack.pop();
          const holder = stack[stack.length - 1].el;
          holder.children[holder.children.length - 1].children.push(fresh.el);
        } else {
          stack.pop();
          root.push(fresh.el);
        }
        stack.push(fresh);
        top = fresh;
      }
      top.el.children.push(node("li", inline(m[3])));
    }
    return { blocks: root, next: j };
  }

  function parse(source) {
    const lines = String(source).split("\n");
    const out = [];
    let para = [];
    function flushPara() {
      if (para.length) out.push(node("p", joinLines(para)));
      para = [];
    }
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (/^\s*```\s*([\w+-]*)\s*$/.test(line)) {
        flushPara();
        const code = [];
        i++;
        while (i < lines.length && !/^\s*```\s*$/.test(lines[i])) code.push(lines[i++]);
        out.push(node("pre", [node("code", [code.join("\n")])]));
        continue;
      }
      const heading = line.match(/^(#{1,6})\s+(.*)$/);
      if (heading) {
        flushPara();
        out.push(node("h" + heading[1].length, inline(heading[2])));
        continue;
      }
      if (ITEM.test(line)) {
        flushPara();
        const found = list(lines, i);
        for (const b of found.blocks) out.push(b);
        i = found.next - 1;
        continue;
      }
      if (isTableStart(lines, i)) {
        flushPara();
        const found = table(lines, i);
        out.push(found.block);
        i = found.next - 1;
        continue;
      }
      const quote = line.match(/^>\s?(.*)$/);
      if (quote) {
        flushPara();
        out.push(node("blockquote", inline(quote[1])));
        continue;
      }
      if (!line.trim()) { flushPara(); continue; }
      para.push(line);
    }
    flushPara();
    return out;
  }

  // -- output -----------------------------------------------------------------------------

  // The tree of `source`, or null when it is past the limits (shown as plain text then).
  function tree(source) {
    if (String(source).length > LIMITS.chars) return null;
    budget = LIMITS.nodes;
    try {
      return parse(source);
    } catch (e) {
      if (e instanceof TooBig) return null;
      throw e;
    }
  }

  const PLAIN_NOTE = "(shown as plain text: too long or too deeply nested to format)";

  function toHtml(n) {
    if (typeof n === "string") return escapeHtml(visible(n));
    let attrs = "";
    for (const key in n.attrs || {}) attrs += " " + key + '="' + escapeHtml(n.attrs[key]) + '"';
    if (n.tag === "br") return "<br>";
    return "<" + n.tag + attrs + ">" + n.children.map(toHtml).join("") + "</" + n.tag + ">";
  }

  /** The Markdown `source` as HTML: every character of the text escaped (past the limits, or
   * when formatting fails, the text as it is, in a `plain` block). */
  function render(source) {
    let parsed = null;
    try { parsed = tree(source); } catch (e) { parsed = null; }
    if (parsed === null) {
      return '<div class="plain">' + escapeHtml(visible(source)) + "</div>" +
        '<div class="render-note">' + PLAIN_NOTE + "</div>";
    }
    return parsed.map(toHtml).join("");
  }

  function copyButton(pre) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.title = "Copy the code";
    button.addEventListener("click", function () {
      const text = pre.textContent;
      function done(ok) {
        button.textContent = ok ? "Copied" : "Copy failed";
        setTimeout(function () { button.textContent = "Copy"; }, 1500);
      }
      function fallback() { // plain http from another machine has no navigator.clipboard
        const area = document.createElement("textarea");
        area.value = text;
        area.style.position = "fixed";
        area.style.opacity = "0";
        document.body.appendChild(area);
        area.select();
        let ok = false;
        try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
        area.remove();
        done(ok);
      }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done(true); }, fallback);
      } else fallback();
    });
    return button;
  }

  function toDom(n) {
    if (typeof n === "string") return document.createTextNode(visible(n));
    const el = document.createElement(n.tag);
    for (const key in n.attrs || {}) el.setAttribute(key, n.attrs[key]);
    for (const child of n.children) el.appendChild(toDom(child));
    if (n.tag === "pre" || n.tag === "table") { // scrolls inside itself, never the page
      const box = document.createElement("div");
      box.className = n.tag === "pre" ? "code-block" : "table-box";
      if (n.tag === "pre") box.appendChild(copyButton(el));
      box.appendChild(el);
      return box;
    }
    return el;
  }

  function plainInto(element, source) {
    const text = document.createElement("div");
    text.className = "plain";
    text.textContent = visible(source);
    const note = document.createElement("div");
    note.className = "render-note";
    note.textContent = PLAIN_NOTE;
    element.replaceChildren(text, note);
  }

  /** Replace the content of `element` with the Markdown `source`, built as DOM nodes; past the
   * limits, or when formatting fails (whatever the reason), `source` as plain text. */
  function renderInto(element, source) {
    try {
      const parsed = tree(source);
      if (parsed === null) { plainInto(element, source); return; }
      const fragment = document.createDocumentFragment();
      for (const n of parsed) fragment.appendChild(toDom(n));
      element.replaceChildren(fragment);
    } catch (e) {
      plainInto(element, source);
    }
  }

  window.agentcoreMarkdown = {
    render: render, renderInto: renderInto, escapeHtml: escapeHtml, visible: visible,
    limits: LIMITS,
  };
})();
