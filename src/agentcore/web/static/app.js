// The agentcore chat page: reads a session's AG-UI event stream (SSE) and renders it.
// Model text only ever reaches the page as text: textContent, or the Markdown renderer's DOM nodes,
// with bidi marks shown as escapes (`md.visible`). One message that cannot be shown is shown as
// plain text (or left out, with a line saying so), and the rest of the transcript goes on.
"use strict";
(function () {
  const md = window.agentcoreMarkdown;
  const shown = md.visible;
  const $ = function (id) { return document.getElementById(id); };
  const view = {
    messages: $("messages"), prompt: $("prompt"), send: $("send"), stop: $("stop"),
    delivery: $("delivery"),
    model: $("model"), status: $("status"), sessions: $("sessions"), usage: $("session-usage"),
    newActivity: $("new-activity"), menu: $("menu"), backdrop: $("backdrop"),
  };
  let sessionId = null;
  let source = null;
  let running = false;
  let defaultModel = null;
  // Ids come from the model and the server: they key prototype-less objects, so an id such as
  // "__proto__" or "constructor" is an ordinary key and never reaches Object.prototype.
  function idMap() { return Object.create(null); }
  let blocks = idMap();   // assistant message id -> {el, parts}
  let texts = idMap();    // text message id -> {el, text, role}
  let cards = idMap();    // tool call id -> card elements
  let reasonings = idMap(); // reasoning message id -> body element
  let pending = new Set(); // tool call ids waiting for approval
  let totals = { tokens: 0, cost: 0 };
  // Handoffs (agentcore.handoffs): the agent that has the conversation, as the page last heard
  // (from a switch, an answer's metadata.agentcore.agent); null in a session without handoffs.
  let speaking = null;
  let callers = []; // the agents a returning handoff comes back to
  let renderQueued = new Set();

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = shown(text);
    return node;
  }

  async function api(method, path, body) {
    const init = { method: method, headers: {} };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    const data = await response.json().catch(function () { return {}; });
    if (!response.ok) throw new Error(data.error || response.statusText);
    return data;
  }

  // -- following the conversation ------------------------------------------------------------
  // While the reader is at the bottom, whatever is added (a token, a long tool result) keeps the
  // bottom in view; once they scroll up, the position stays and "new activity" is offered.
  // `follow` changes only when the reader moves: a scroll that lands where the page last put it
  // (content grew after the page scrolled) is not the reader's.
  const NEAR_BOTTOM = 40; // px from the bottom that still count as "at the bottom"
  let follow = true;
  let autoTop = -1; // scrollTop the page last set
  let followQueued = false;

  function distanceFromBottom() {
    const m = view.messages;
    return m.scrollHeight - m.scrollTop - m.clientHeight;
  }

  function toBottom() {
    const m = view.messages;
    m.scrollTop = m.scrollHeight;
    autoTop = m.scrollTop;
    follow = true;
    view.newActivity.hidden = true;
  }

  function afterChange() { // after anything was added to the transcript, in the next frame
    if (followQueued) return;
    followQueued = true;
    requestAnimationFrame(function () {
      followQueued = false;
      if (follow) toBottom();
      else if (distanceFromBottom() > NEAR_BOTTOM) view.newActivity.hidden = false;
    });
  }

  view.messages.addEventListener("scroll", function () {
    if (view.messages.scrollTop === autoTop) return;
    autoTop = -1;
    follow = distanceFromBottom() <= NEAR_BOTTOM;
    if (follow) view.newActivity.hidden = true;
  }, { passive: true });
  new MutationObserver(afterChange).observe(view.messages,
    { childList: true, subtree: true, characterData: true });
  view.newActivity.addEventListener("click", toBottom);

  // While a run goes, what is sent is queued into it: as steering or as a follow-up, as the
  // choice beside the Send button says (the button says it too).
  function sendLabel() {
    if (!running) return "Send";
    return view.delivery.value === "follow-up" ? "Follow up" : "Steer";
  }

  function setRunning(value) {
    running = value;
    document.body.classList.toggle("running", value);
    view.stop.disabled = !value;
    view.send.textContent = sendLabel();
    view.status.textContent = value ? "running" : "idle";
    view.status.className = "status" + (value ? " running" : "");
    view.model.disabled = value;
  }

  function formatUsage(u) {
    const cached = u.cacheRead ? " (" + u.cacheRead + " cached)" : "";
    const input = u.input + u.cacheRead + u.cacheWrite;
    return input + " in" + cached + " · " + u.output + " out · $" + u.cost.toFixed(4);
  }

  // -- the transcript ---------------------------------------------------------------------

  function clear() {
    view.messages.textContent = "";
    blocks = idMap(); texts = idMap(); cards = idMap(); reasonings = idMap(); totals = { tokens: 0, cost: 0 };
    speaking = null; callers = [];
    view.usage.textContent = "";
  }

  function baseId(id) { return String(id).split(".")[0]; }

  function queuedBubble(text, kind, held) {
    const labels = { steering: "(queued: steers the run at its next turn)",
      followUp: "(queued: follows up when the answer is done)", held: "(starts the next run)" };
    const q = el("div", "msg user queued" + (held ? " held" : ""));
    q.appendChild(el("span", "body", text));
    q.appendChild(el("span", "kind", labels[held ? "held" : kind]));
    q.dataset.text = text;
    q.dataset.kind = held ? "held" : kind;
    view.messages.appendChild(q);
  }

  // The server's list of what is queued and not yet taken (also after a reconnect).
  function showQueued(queued) {
    for (const q of view.messages.querySelectorAll(".msg.user.queued:not(.held)")) q.remove();
    if (!queued) return;
    for (const kind of ["steering", "followUp"]) {
      for (const text of queued[kind] || []) queuedBubble(text, kind, false);
    }
  }

  function userBubble(id, text) {
    const bubble = el("div", "msg user");
    bubble.dataset.messageId = id;
    bubble.dataset.text = text; // as sent (the body shows bidi marks as escapes)
    bubble.appendChild(el("span", "body", text));
    const branch = el("button", "branch-btn", "edit in a branch");
    branch.type = "button";
    branch.title = "Start a new session with the messages before this one, to edit and resend it";
    branch.addEventListener("click", function () { branchAt(id, bubble); });
    bubble.appendChild(branch);
    for (const q of view.messages.querySelectorAll(".msg.user.queued")) {
      if (q.dataset.text === text) { q.remove(); break; }
    }
    view.messages.appendChild(bubble);
    return bubble;
  }

  function block(id) {
    const key = baseId(id);
    if (!blocks[key]) {
      const node = el("div", "msg assistant");
      node.dataset.messageId = key;
      view.messages.appendChild(node);
      blocks[key] = { el: node };
      if (speaking) agentLabel(node, speaking);
    }
    return blocks[key].el;
  }

  // Who speaks: each answer of a session with handoffs is labelled with its agent (the name is
  // text from the server: set as textContent, never as markup), and a switch shows as a line
  // between two answers.
  function agentLabel(node, name) {
    let label = node.querySelector(":scope > .agent-name");
    if (!label) {
      label = el("div", "agent-name");
      node.insertBefore(label, node.firstChild);
    }
    label.textContent = shown(name);
    node.dataset.agent = name;
  }

  function handoffLine(from, to, returns) {
    let text = "handoff: " + from + " → " + to;
    if (returns && callers.length && callers[callers.length - 1] === to) {
      callers.pop();
      text = "return: " + from + " → " + to;
    } else if (returns) {
      callers.push(from);
      text += " (returns)";
    }
    const line = el("div", "msg handoff-line", text);
    line.dataset.from = from;
    line.dataset.to = to;
    view.messages.appendChild(line);
  }

  // An answer of `name` (its message id `id`): labelled, and after another agent's answers a
  // switch line first when no agent_switch event drew one (a transcript loaded whole).
  function spokenBy(id, name) {
    if (typeof name !== "string" || !name) return;
    const key = baseId(id);
    const existing = blocks[key];
    if (!existing && speaking && speaking !== name) handoffLine(speaking, name, false);
    speaking = name;
    agentLabel(block(id), name);
  }

  function textPart(id, role) {
    if (role === "user") {
      texts[id] = { role: "user", text: "", el: null };
      return;
    }
    const node = el("div", "text");
    block(id).appendChild(node);
    texts[id] = { role: "assistant", text: "", el: node };
  }

  // A streamed answer is drawn again as it grows, at most once a frame, and never more than a
  // fifth of the time: after a drawing that took 50 ms the next waits 200 ms (a long answer
  // streams in larger steps instead of freezing the tab).
  let renderScheduled = false;
  let renderCost = 0; // ms the last drawing took

  function renderText(id) {
    renderQueued.add(id);
    if (renderScheduled) return;
    renderScheduled = true;
    setTimeout(function () {
      requestAnimationFrame(function () {
        const started = performance.now();
        for (const key of renderQueued) {
          const part = texts[key];
          if (part && part.el) md.renderInto(part.el, part.text);
        }
        renderQueued.clear();
        renderScheduled = false;
        renderCost = performance.now() - started;
      });
    }, Math.min(renderCost * 4, 2000));
  }

  function thinking(id) {
    const details = el("details", "thinking");
    const summary = el("summary", null, "Thinking");
    const body = el("div", "body");
    details.appendChild(summary);
    details.appendChild(body);
    block(id).appendChild(details);
    reasonings[id] = body;
    return body;
  }

  // Code mode (agentcore.codemode): the code tool's snippet shows as code, and the calls it makes
  // as cards nested under its card (TOOL_CALL_START with metadata.agentcore.parentToolCallId).
  // Those calls are in no transcript message: a reload shows the snippet and its result only.
  const CODE_TOOL = "run_code";

  function card(callId, name, parentId, parentCall) {
    if (cards[callId]) return cards[callId];
    const node = el("div", "tool-card streaming");
    node.dataset.toolCallId = callId;
    const head = el("div", "head");
    // A skill's activation (agentcore.skills' activate_skill) shows as one: badge "skill", the
    // skill's name once the arguments are complete, "activated" when its result arrives.
    const skill = name === "activate_skill";
    if (skill) node.classList.add("skill");
    head.appendChild(el("span", "badge", skill ? "skill" : "tool"));
    const nameEl = el("span", "name", name);
    head.appendChild(nameEl);
    const state = el("span", "state", "writing arguments…");
    head.appendChild(state);
    node.appendChild(head);
    const argsLabel = el("div", "label", "arguments");
    node.appendChild(argsLabel);
    const args = el("pre", "args");
    node.appendChild(args);
    const nested = el("div", "nested-calls"); // the cards of the calls its snippet makes
    node.appendChild(nested);
    const progress = el("pre", "progress");
    const result = el("pre", "tool-result");
    const approval = el("div", "approval");
    approval.hidden = true;
    node.appendChild(progress);
    node.appendChild(approval);
    node.appendChild(el("div", "label result-label", "result"));
    node.appendChild(result);
    const parent = parentCall ? cards[parentCall] : null;
    if (parent) {
      node.classList.add("nested");
      parent.nested.appendChild(node);
      if (!parent.snippet) { parent.snippet = true; prettyArgs(parent); }
    } else {
      block(parentId || ("tool-" + callId)).appendChild(node);
    }
    cards[callId] = { el: node, state: state, args: args, progress: progress, result: result,
      approval: approval, argText: "", skill: skill, nameEl: nameEl, name: name,
      argsLabel: argsLabel, nested: nested, parentCall: parentCall || null, snippet: false };
    return cards[callId];
  }

  function setCard(c, cls, label) {
    c.el.className = "tool-card " + cls + (c.skill ? " skill" : "") +
      (c.parentCall ? " nested" : "") + (c.el.classList.contains("snippet") ? " snippet" : "");
    c.state.textContent = label;
  }

  // The code tool's arguments ({"code": ..., "reset"?: true}) as the snippet's lines, as text.
  function snippetArgs(c, parsed) {
    if (c.parentCall || !(c.snippet || c.name === CODE_TOOL)) return false;
    if (!parsed || typeof parsed !== "object" || typeof parsed.code !== "string") return false;
    if (Object.keys(parsed).some(function (k) { return k !== "code" && k !== "reset"; })) return false;
    c.el.classList.add("snippet");
    c.args.classList.add("code");
    c.argsLabel.textContent = "code" + (parsed.reset === true ? " (variables reset)" : "");
    c.args.textContent = shown(parsed.code);
    return true;
  }

  function prettyArgs(c) {
    try {
      const parsed = JSON.parse(c.argText);
      if (snippetArgs(c, parsed)) return;
      c.args.textContent = shown(JSON.stringify(parsed, null, 2));
      if (c.skill && parsed && typeof parsed.name === "string") {
        c.nameEl.textContent = "activate_skill: " + shown(parsed.name);
      }
    }
    catch (e) { c.args.textContent = shown(c.argText); }
  }

  function showResult(callId, content, isError) {
    const c = cards[callId] || card(callId, "tool", null);
    c.result.textContent = shown(content);
    c.progress.textContent = "";
    // A denied call's result is an error result whose text says so (agentcore._approvals.transcript, denied_text).
    const denied = isError && (c.denied ||
      String(content).indexOf("Tool call was not executed: it was denied") === 0);
    if (denied) setCard(c, "denied", "denied");
    else if (c.skill && !isError) setCard(c, "done", "skill activated");
    else setCard(c, isError ? "error" : "done", isError ? "error" : "done");
    c.approval.hidden = true;
  }

  function showApprovals(list) {
    const before = pending;
    pending = new Set(list.map(function (a) { return a.toolCallId; }));
    for (const id in cards) {
      const c = cards[id];
      if (!pending.has(id)) { c.approval.hidden = true; c.asking = null; continue; }
      const info = list.find(function (a) { return a.toolCallId === id; });
      if (info && info.inputSchema) { showQuestion(c, id, info, !before.has(id)); continue; }
      c.asking = null;
      c.focusQuestion = null;
      c.approval.classList.remove("input-request");
      c.approval.textContent = "";
      c.approval.appendChild(el("span", null, "Needs your approval" +
        (info && info.reason ? ": " + info.reason : "")));
      const yes = el("button", "approve", "Approve");
      const no = el("button", "deny", "Deny");
      yes.type = no.type = "button";
      yes.addEventListener("click", function () { decide(id, true); });
      no.addEventListener("click", function () { decide(id, false); });
      c.approval.appendChild(yes);
      c.approval.appendChild(no);
      c.approval.hidden = false;
      setCard(c, "waiting", "waiting for approval");
      if (!before.has(id)) bringIntoView(c);
    }
  }

  // A tool's question for the user (an MCP elicitation): a form built from the answer's schema
  // (static/inputform.js), kept as it is while the same question waits (what is typed stays).
  function showQuestion(c, id, info, fresh) {
    const key = JSON.stringify([info.reason, info.inputSchema]);
    const built = c.asking !== key;
    if (built) {
      c.asking = key;
      c.approval.textContent = "";
      c.approval.classList.add("input-request");
      c.approval.appendChild(el("div", "question", info.reason || "The tool asks for input"));
      const path = "api/sessions/" + encodeURIComponent(sessionId) + "/approvals/" +
        encodeURIComponent(id);
      const form = window.agentcoreInputForm.build(info.inputSchema, {
        submit: function (content) { return api("POST", path, { approved: true, arguments: content }); },
        decline: function () { return api("POST", path, { approved: false }); },
        cancel: function () { return api("POST", path, { approved: false, reason: "cancel" }); },
      });
      c.approval.appendChild(form.el);
      c.focusQuestion = form.focus;
    }
    c.approval.hidden = false;
    setCard(c, "waiting", "waiting for your answer");
    if (fresh || built) bringIntoView(c); // also a form drawn again (the transcript redrawn)
  }

  // An approval card is always shown, wherever the reader was: the run waits for it. After the
  // frame's own following, so that nothing scrolls it away again.
  function bringIntoView(c) {
    requestAnimationFrame(function () {
      requestAnimationFrame(function () {
        c.el.scrollIntoView({ block: "nearest" });
        c.approval.scrollIntoView({ block: "nearest" });
        if (distanceFromBottom() <= 120) toBottom(); // the card ends the transcript: follow again
        // a question's first field takes the focus, unless the reader is typing something
        const active = document.activeElement;
        const idle = !active || active === document.body ||
          ($("composer").contains(active) && !view.prompt.value);
        if (c.focusQuestion && idle) c.focusQuestion();
      });
    });
  }

  function usageLine(id, meta) {
    const node = block(id);
    if (meta.stopReason === "aborted") node.appendChild(el("div", "stopped", "(stopped)"));
    if (meta.stopReason === "error" && meta.errorMessage) {
      node.appendChild(el("div", "error-line", meta.errorMessage));
    }
    if (meta.usage) {
      node.appendChild(el("div", "usage-line", meta.model + " · " + formatUsage(meta.usage)));
      totals.tokens += meta.usage.totalTokens;
      totals.cost += meta.usage.cost;
      view.usage.textContent = "session: " + totals.tokens + " tokens · $" + totals.cost.toFixed(4);
    }
  }

  function snapshot(messages) {
    clear();
    for (const m of messages) {
      try {
        showMessage(m);
      } catch (err) { // this message only: the rest of the transcript (approval cards too) goes on
        const shownAs = el("div", "msg error-line",
          "(a message could not be shown: " + (err && err.message ? err.message : err) + ")");
        view.messages.appendChild(shownAs);
      }
    }
    toBottom();
  }

  function showMessage(m) {
    if (m.role === "user") {
      const text = typeof m.content === "string" ? m.content
        : m.content.map(function (p) { return p.text || "[image]"; }).join("");
      userBubble(m.id, text);
    } else if (m.role === "reasoning") {
      thinking(m.id).textContent = shown(m.content);
    } else if (m.role === "assistant") {
      const agent = m.metadata && m.metadata.agentcore && m.metadata.agentcore.agent;
      if (agent) spokenBy(m.id, agent);
      block(m.id);
      if (m.content) {
        textPart(m.id, "assistant");
        texts[m.id].text = m.content;
        md.renderInto(texts[m.id].el, m.content);
      }
      for (const call of m.toolCalls || []) {
        const c = card(call.id, call.function.name, m.id);
        c.argText = call.function.arguments;
        prettyArgs(c);
        setCard(c, "waiting", "no result");
      }
      const meta = m.metadata && m.metadata.agentcore;
      if (meta) usageLine(m.id, meta);
    } else if (m.role === "tool") {
      showResult(m.toolCallId, m.content, !!m.error);
    }
  }

  // -- the event stream ---------------------------------------------------------------------

  const handlers = {
    MESSAGES_SNAPSHOT: function (e) { snapshot(e.messages); },
    STATE_SNAPSHOT: function (e) {
      const s = e.snapshot;
      setRunning(s.running);
      if (s.model) selectModel(s.model);
      showApprovals(s.pendingApprovals || []);
      showQueued(s.queued);
      if (!s.running && pending.size) {
        const asks = (s.pendingApprovals || []).some(function (a) { return a.inputSchema; });
        view.status.textContent = asks ? "waiting for your answer" : "waiting for your approval";
      }
    },
    RUN_STARTED: function () { setRunning(true); },
    RUN_FINISHED: function () { setRunning(false); loadSessions(); },
    RUN_ERROR: function (e) {
      setRunning(false);
      view.messages.appendChild(el("div", "msg error-line", e.message));
    },
    TEXT_MESSAGE_START: function (e) { textPart(e.messageId, e.role); },
    TEXT_MESSAGE_CONTENT: function (e) {
      const part = texts[e.messageId];
      if (!part) return;
      part.text += e.delta;
      if (part.role === "assistant") renderText(e.messageId);
    },
    TEXT_MESSAGE_END: function (e) {
      const part = texts[e.messageId];
      if (part && part.role === "user") userBubble(e.messageId, part.text);
    },
    REASONING_MESSAGE_START: function (e) { thinking(e.messageId); },
    REASONING_MESSAGE_CONTENT: function (e) {
      const body = reasonings[e.messageId];
      if (body) body.textContent += shown(e.delta); // each mark is one character: escaped alone
    },
    TOOL_CALL_START: function (e) {
      const meta = (e.metadata && e.metadata.agentcore) || {};
      const parentCall = typeof meta.parentToolCallId === "string" ? meta.parentToolCallId : null;
      card(e.toolCallId, e.toolCallName, e.parentMessageId, parentCall);
    },
    TOOL_CALL_ARGS: function (e) {
      const c = cards[e.toolCallId];
      if (!c) return;
      c.argText += e.delta;
      c.args.textContent = shown(c.argText);
    },
    TOOL_CALL_END: function (e) {
      const c = cards[e.toolCallId];
      if (c) { prettyArgs(c); setCard(c, "waiting", "queued"); }
    },
    TOOL_CALL_RESULT: function (e) {
      const meta = (e.metadata && e.metadata.agentcore) || {};
      showResult(e.toolCallId, e.content, !!meta.isError);
    },
    CUSTOM: function (e) {
      const v = e.value || {};
      const c = v.toolCallId ? cards[v.toolCallId] : null;
      if (e.name === "agentcore.tool_execution_start" && c) setCard(c, "running", "running…");
      else if (e.name === "agentcore.tool_execution_update" && c) c.progress.textContent = shown(v.text);
      else if (e.name === "agentcore.message_end") {
        if (v.agent) spokenBy(v.messageId, v.agent);
        usageLine(v.messageId, v);
      } else if (e.name === "agentcore.agent_switch" && typeof v.toAgent === "string") {
        handoffLine(String(v.fromAgent), v.toAgent, !!v.returns);
        speaking = v.toAgent;
      }
      else if (e.name === "agentcore.message_held") queuedBubble(v.text, "held", true);
    },
  };

  function connect() {
    if (source) source.close();
    source = new EventSource("api/sessions/" + encodeURIComponent(sessionId) + "/events");
    source.onmessage = function (message) {
      const event = JSON.parse(message.data);
      const handle = handlers[event.type];
      try {
        if (handle) handle(event);
      } catch (err) { // one event the page cannot show never stops the stream's next ones
        console.error("agentcore: could not show a " + event.type + " event", err);
      }
    };
    source.onerror = function () {
      if (source.readyState === EventSource.CLOSED) view.status.textContent = "disconnected";
    };
  }

  // -- the sidebar as a drawer (narrow screens) -----------------------------------------------

  function setDrawer(open) {
    document.body.classList.toggle("drawer-open", open);
    view.menu.setAttribute("aria-expanded", open ? "true" : "false");
  }
  view.menu.addEventListener("click", function () {
    setDrawer(!document.body.classList.contains("drawer-open"));
  });
  view.backdrop.addEventListener("click", function () { setDrawer(false); });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") setDrawer(false); });

  async function openSession(id) {
    setDrawer(false);
    sessionId = id;
    history.replaceState(null, "", "#session=" + encodeURIComponent(id));
    clear();
    connect();
    markCurrent();
  }

  function newChat() {
    setDrawer(false);
    if (source) { source.close(); source = null; }
    sessionId = null;
    history.replaceState(null, "", location.pathname + location.search);
    clear();
    view.messages.appendChild(el("div", "empty", "Start a conversation below."));
    setRunning(false);
    if (defaultModel) selectModel(defaultModel);
    markCurrent();
  }

  async function branchAt(id, bubble) {
    if (!sessionId) return;
    const index = parseInt(String(id).slice(1), 10);
    const text = bubble.dataset.text; // the message as sent, not as shown
    const created = await api("POST", "api/sessions/" + encodeURIComponent(sessionId) + "/branch",
      { index: index });
    await openSession(created.id);
    view.prompt.value = text;
    view.prompt.focus();
    loadSessions();
  }

  async function decide(callId, approved) {
    const c = cards[callId];
    if (c && !approved) c.denied = true;
    try {
      await api("POST", "api/sessions/" + encodeURIComponent(sessionId) + "/approvals/" +
        encodeURIComponent(callId), { approved: approved });
    } catch (err) { alert(err.message); }
  }

  async function send(event) {
    event.preventDefault();
    const text = view.prompt.value;
    if (!text.trim()) return;
    view.prompt.value = "";
    toBottom(); // what you send, and what answers it, is what you want to see
    try {
      if (!sessionId) {
        const created = await api("POST", "api/sessions", { model: view.model.value || undefined });
        await openSession(created.id);
        loadSessions();
      }
      // steer or follow-up: queued into the run going, or (none going) the start of one
      const kind = view.delivery.value === "follow-up" ? "follow-up" : "steer";
      await api("POST", "api/sessions/" + encodeURIComponent(sessionId) + "/" + kind, { text: text });
    } catch (err) {
      view.prompt.value = text;
      view.messages.appendChild(el("div", "msg error-line", err.message));
    }
  }

  // -- models and sessions -----------------------------------------------------------------

  function selectModel(ref) {
    if (![...view.model.options].some(function (o) { return o.value === ref; })) {
      const option = el("option", null, ref);
      option.value = ref;
      view.model.appendChild(option);
    }
    view.model.value = ref;
  }

  async function loadModels() {
    const info = await api("GET", "api/info");
    defaultModel = info.defaultModel;
    const models = await api("GET", "api/models");
    const current = sessionId ? view.model.value : null; // a session's model may be known already
    const groups = idMap();
    view.model.textContent = "";
    for (const m of models) {
      if (!groups[m.provider]) {
        groups[m.provider] = el("optgroup");
        groups[m.provider].label = m.provider;
        view.model.appendChild(groups[m.provider]);
      }
      const option = el("option", null, m.name + (m.usable ? "" : " (unavailable)"));
      option.value = m.ref;
      option.disabled = !m.usable;
      if (m.reason) option.title = m.reason;
      groups[m.provider].appendChild(option);
    }
    if (current) selectModel(current);
    else if (!sessionId && defaultModel) selectModel(defaultModel);
  }

  function markCurrent() {
    for (const li of view.sessions.children) {
      li.classList.toggle("current", li.dataset.sessionId === sessionId);
    }
  }

  async function loadSessions() {
    const list = await api("GET", "api/sessions");
    view.sessions.textContent = "";
    for (const s of list) {
      const li = el("li");
      li.dataset.sessionId = s.id;
      li.appendChild(el("span", "title", (s.parent ? "↳ " : "") + (s.title || "(empty)")));
      const when = new Date(s.updatedAt).toLocaleString();
      li.appendChild(el("span", "meta", when + " · " + s.messages + " messages"));
      li.title = shown(s.title);
      li.addEventListener("click", function () { openSession(s.id); });
      view.sessions.appendChild(li);
    }
    markCurrent();
  }

  view.model.addEventListener("change", async function () {
    if (!sessionId) return;
    try {
      await api("POST", "api/sessions/" + encodeURIComponent(sessionId) + "/model",
        { model: view.model.value });
    } catch (err) { alert(err.message); }
  });
  $("composer").addEventListener("submit", send);
  view.delivery.addEventListener("change", function () { view.send.textContent = sendLabel(); });
  view.prompt.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("composer").requestSubmit(); }
  });
  view.stop.addEventListener("click", function () {
    if (sessionId) api("POST", "api/sessions/" + encodeURIComponent(sessionId) + "/abort", {});
  });
  $("new-chat").addEventListener("click", newChat);

  const match = location.hash.match(/session=([A-Za-z0-9_-]+)/);
  if (match) openSession(match[1]); else newChat();
  Promise.all([loadModels(), loadSessions()]).then(function () {
    document.body.dataset.ready = "true"; // for tests: the page is set up
  });
})();
