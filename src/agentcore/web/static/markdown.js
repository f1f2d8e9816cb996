// A small, safe Markdown renderer: the text is HTML-escaped FIRST, then formatted, so model
// output can never add markup of its own (a <script> shows as text). Supports fenced code,
// headings, lists, block quotes, paragraphs, `code`, **bold**, *italic*, and http(s) links.
"use strict";
(function () {
  function escapeHtml(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  }

  function emphasis(escaped) {
    return escaped
      .replace(/\*\*(\S(?:[^\n]*?\S)?)\*\*/g, "<strong>$1</strong>")
      .replace(/(^|[^\w])__(\S(?:[^\n]*?\S)?)__(?!\w)/g, "$1<strong>$2</strong>")
      .replace(/(^|[^*\w])\*([^*\s](?:[^*\n]*[^*\s])?)\*(?!\*)/g, "$1<em>$2</em>")
      .replace(/(^|[^_\w])_([^_\n]+)_(?!\w)/g, "$1<em>$2</em>");
  }

  // `escaped` has no markup: only the tags added here can appear in the result.
  function inline(escaped) {
    const parts = escaped.split(/(`[^`\n]+`)/);
    return parts.map(function (part, i) {
      if (i % 2 === 1) return "<code>" + part.slice(1, -1) + "</code>";
      // links become placeholders first, so emphasis never reaches inside an address
      const links = [];
      const text = part.replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, function (_m, label, url) {
        links.push('<a href="' + url + '" target="_blank" rel="noopener noreferrer">' +
          emphasis(label) + "</a>");
        return "\u0000" + (links.length - 1) + "\u0000";
      });
      return emphasis(text).replace(/\u0000(\d+)\u0000/g, function (_m, n) { return links[+n]; });
    }).join("");
  }

  function render(source) {
    // a NUL could pose as a link placeholder: none survives
    const lines = escapeHtml(String(source).replace(/\u0000/g, "\uFFFD")).split("\n");
    const out = [];
    let para = [];
    let list = null; // {tag, items}
    function flushPara() {
      if (para.length) out.push("<p>" + para.map(inline).join("<br>") + "</p>");
      para = [];
    }
    function flushList() {
      if (list) out.push("<" + list.tag + ">" + list.items.map(function (item) {
        return "<li>" + inline(item) + "</li>";
      }).join("") + "</" + list.tag + ">");
      list = null;
    }
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const fence = line.match(/^\s*```\s*([\w+-]*)\s*$/);
      if (fence) {
        flushPara(); flushList();
        const code = [];
        i++;
        while (i < lines.length && !/^\s*```\s*$/.test(lines[i])) code.push(lines[i++]);
        out.push("<pre><code>" + code.join("\n") + "</code></pre>");
        continue;
      }
      const heading = line.match(/^(#{1,6})\s+(.*)$/);
      if (heading) {
        flushPara(); flushList();
        const level = heading[1].length;
        out.push("<h" + level + ">" + inline(heading[2]) + "</h" + level + ">");
        continue;
      }
      const bullet = line.match(/^\s*[-*+]\s+(.*)$/);
      const numbered = line.match(/^\s*\d+[.)]\s+(.*)$/);
      if (bullet || numbered) {
        flushPara();
        const tag = bullet ? "ul" : "ol";
        if (!list || list.tag !== tag) { flushList(); list = { tag: tag, items: [] }; }
        list.items.push((bullet || numbered)[1]);
        continue;
      }
      const quote = line.match(/^&gt;\s?(.*)$/);
      if (quote) {
        flushPara(); flushList();
        out.push("<blockquote>" + inline(quote[1]) + "</blockquote>");
        continue;
      }
      if (!line.trim()) { flushPara(); flushList(); continue; }
      flushList();
      para.push(line);
    }
    flushPara(); flushList();
    return out.join("");
  }

  window.agentcoreMarkdown = { render: render, escapeHtml: escapeHtml };
})();
