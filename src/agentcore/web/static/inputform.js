// The form that answers a tool's question for the user (an MCP elicitation: an approval request
// with an input schema). Built from DOM nodes only: the schema comes from an MCP server, so every
// title, description, key and enum value is hostile text and only ever reaches the page as
// textContent, an attribute value or an option's text.
//
// MCP elicitation schemas are flat objects of primitive properties: string (format email, uri,
// date, date-time; minLength/maxLength; enum, enumNames or oneOf [{const, title}]), number and
// integer (minimum/maximum), boolean, and a multi-select (an array whose items are such a list
// of strings; minItems/maxItems). Any other shape is answered as JSON in a textarea.
// The checks here only give a quick message: the server checks the answer against the schema and
// its refusal (400) is shown beside the form.
"use strict";
(function () {
  let formCount = 0;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = window.agentcoreMarkdown.visible(text);
    return node;
  }

  function isObject(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function own(obj, key) { return Object.prototype.hasOwnProperty.call(obj, key); }
  function str(v) { return typeof v === "string" ? v : ""; }

  // The choices of a string property: [{value, label}], or null when it has none.
  function choices(prop) {
    if (Array.isArray(prop.enum)) {
      if (!prop.enum.every(function (v) { return typeof v === "string"; })) return undefined;
      const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
      return prop.enum.map(function (v, i) {
        return { value: v, label: typeof names[i] === "string" ? names[i] : v };
      });
    }
    const list = Array.isArray(prop.oneOf) ? prop.oneOf : Array.isArray(prop.anyOf) ? prop.anyOf : null;
    if (list) {
      const ok = list.every(function (o) { return isObject(o) && typeof o.const === "string"; });
      if (!ok) return undefined;
      return list.map(function (o) { return { value: o.const, label: str(o.title) || o.const }; });
    }
    return null;
  }

  // The choices of a multi-select (an array of strings from a list), or null.
  function multiChoices(prop) {
    const items = prop.items;
    if (!isObject(items) || (items.type !== undefined && items.type !== "string")) return null;
    return choices(items) || null;
  }

  // True when the form can show the schema field by field (else: the JSON textarea).
  function supported(schema) {
    if (!isObject(schema) || (schema.type !== undefined && schema.type !== "object")) return false;
    if (!isObject(schema.properties)) return false;
    if (schema.required !== undefined && !Array.isArray(schema.required)) return false;
    for (const key of Object.keys(schema.properties)) {
      const prop = schema.properties[key];
      if (!isObject(prop)) return false;
      if (prop.type === "string") { if (choices(prop) === undefined) return false; }
      else if (prop.type === "array") { if (!multiChoices(prop)) return false; }
      else if (["number", "integer", "boolean"].indexOf(prop.type) < 0) return false;
    }
    return true;
  }

  const INPUT_TYPES = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

  function pad(n) { return String(n).padStart(2, "0"); }

  // A multi-select: a group of checkboxes, one per choice (minItems/maxItems checked).
  function multiField(key, prop, required, ids) {
    const row = el("fieldset", "field multi");
    const legend = el("legend", null, str(prop.title) || key);
    if (required) {
      const mark = el("span", "required-mark", " *");
      mark.setAttribute("aria-hidden", "true");
      legend.appendChild(mark);
    }
    row.appendChild(legend);
    const problem = el("div", "field-error");
    problem.id = ids + "-e";
    problem.setAttribute("aria-live", "polite");
    const hint = el("div", "hint", str(prop.description));
    hint.id = ids + "-h";
    row.setAttribute("aria-describedby", (str(prop.description) ? hint.id + " " : "") + problem.id);
    const preset = Array.isArray(prop.default) ? prop.default : [];
    const boxes = [];
    multiChoices(prop).forEach(function (o, i) {
      const line = el("div", "check");
      const box = el("input");
      box.type = "checkbox";
      box.id = ids + "-" + i;
      box.name = key;
      box.value = o.value;
      box.checked = preset.indexOf(o.value) >= 0;
      const label = el("label", null, o.label);
      label.htmlFor = box.id;
      line.appendChild(box);
      line.appendChild(label);
      row.appendChild(line);
      boxes.push(box);
    });
    if (str(prop.description)) row.appendChild(hint);
    row.appendChild(problem);
    function read() {
      const chosen = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
      if (Number.isInteger(prop.minItems) && chosen.length < prop.minItems) {
        return { problem: "choose at least " + prop.minItems };
      }
      if (Number.isInteger(prop.maxItems) && chosen.length > prop.maxItems) {
        return { problem: "choose at most " + prop.maxItems };
      }
      return { value: chosen, present: required || chosen.length > 0 };
    }
    return { row: row, control: boxes[0] || row, problem: problem, read: read };
  }

  // A field: its row, its control, and read() -> {value, present, problem}.
  function field(key, prop, required, ids) {
    if (prop.type === "array") return multiField(key, prop, required, ids);
    const row = el("div", "field");
    const control = prop.type === "boolean" ? el("input")
      : prop.type === "string" && choices(prop) ? el("select") : el("input");
    control.id = ids + "-f";
    control.name = key;
    const label = el("label", null, str(prop.title) || key);
    label.htmlFor = control.id;
    if (required) {
      const mark = el("span", "required-mark", " *");
      mark.setAttribute("aria-hidden", "true");
      label.appendChild(mark);
      control.required = true;
      control.setAttribute("aria-required", "true");
    }
    const hint = el("div", "hint", str(prop.description));
    hint.id = ids + "-h";
    const problem = el("div", "field-error");
    problem.id = ids + "-e";
    problem.setAttribute("aria-live", "polite");
    const described = [problem.id];
    if (str(prop.description)) described.unshift(hint.id);
    control.setAttribute("aria-describedby", described.join(" "));
    const options = prop.type === "string" ? choices(prop) : null;

    if (prop.type === "boolean") {
      control.type = "checkbox";
      control.required = false; // a checkbox's "required" would mean "must be ticked"
      control.checked = prop.default === true;
      row.classList.add("check");
      row.appendChild(control);
      row.appendChild(label);
    } else {
      if (options) {
        const blank = el("option", null, required ? "(choose one)" : "(none)");
        blank.value = "";
        control.appendChild(blank);
        for (const o of options) {
          const option = el("option", null, o.label);
          option.value = o.value;
          control.appendChild(option);
        }
        if (typeof prop.default === "string") control.value = prop.default;
      } else if (prop.type === "string") {
        control.type = INPUT_TYPES[prop.format] || "text";
        // (a negative length would throw: left to the checks below and the server's)
        if (Number.isInteger(prop.maxLength) && prop.maxLength >= 0) control.maxLength = prop.maxLength;
        if (Number.isInteger(prop.minLength) && prop.minLength >= 0) control.minLength = prop.minLength;
      } else {
        control.type = "number";
        control.step = prop.type === "integer" ? "1" : "any";
        if (typeof prop.minimum === "number") control.min = String(prop.minimum);
        if (typeof prop.maximum === "number") control.max = String(prop.maximum);
        if (typeof prop.default === "number") control.value = String(prop.default);
      }
      row.appendChild(label);
      row.appendChild(control);
    }
    if (str(prop.description)) row.appendChild(hint);
    row.appendChild(problem);

    function read() {
      if (prop.type === "boolean") return { value: control.checked, present: true };
      const raw = control.value;
      if (raw === "") {
        // a typed number the browser cannot read also shows as ""
        if (control.validity && control.validity.badInput) return { problem: "enter a number" };
        return required ? { problem: "required" } : { present: false };
      }
      if (prop.type === "string") {
        if (options) return { value: raw, present: true };
        if (Number.isInteger(prop.minLength) && raw.length < prop.minLength) {
          return { problem: "at least " + prop.minLength + " characters" };
        }
        if (Number.isInteger(prop.maxLength) && raw.length > prop.maxLength) {
          return { problem: "at most " + prop.maxLength + " characters" };
        }
        if (prop.format === "email" && !/^[^\s@]+@[^\s@]+$/.test(raw)) {
          return { problem: "an email address, such as name@example.com" };
        }
        if (prop.format === "uri") {
          try { new URL(raw); } catch (e) { return { problem: "a full address, such as https://example.com" }; }
        }
        if (prop.format === "date-time") {
          const when = new Date(raw); // the local time picked, sent as UTC
          if (isNaN(when.getTime())) return { problem: "a date and time" };
          return { value: when.toISOString(), present: true };
        }
        return { value: raw, present: true };
      }
      const n = Number(raw);
      if (!isFinite(n)) return { problem: "enter a number" };
      if (prop.type === "integer" && !Number.isInteger(n)) return { problem: "a whole number" };
      if (typeof prop.minimum === "number" && n < prop.minimum) return { problem: "at least " + prop.minimum };
      if (typeof prop.maximum === "number" && n > prop.maximum) return { problem: "at most " + prop.maximum };
      return { value: n, present: true };
    }
    if (prop.type === "string" && prop.format === "date-time" && typeof prop.default === "string") {
      const d = new Date(prop.default);
      if (!isNaN(d.getTime())) {
        control.value = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) +
          "T" + pad(d.getHours()) + ":" + pad(d.getMinutes());
      }
    } else if (prop.type === "string" && !options && typeof prop.default === "string") {
      control.value = prop.default;
    }
    return { row: row, control: control, problem: problem, read: read };
  }

  function jsonField(schema, ids) {
    const row = el("div", "field json");
    const area = el("textarea");
    area.id = ids + "-json";
    area.rows = 5;
    area.spellcheck = false;
    area.value = "{}";
    const label = el("label", null, "Answer (a JSON object matching the schema below)");
    label.htmlFor = area.id;
    const problem = el("div", "field-error");
    problem.id = ids + "-json-e";
    problem.setAttribute("aria-live", "polite");
    area.setAttribute("aria-describedby", problem.id);
    const shown = el("details", "schema");
    shown.appendChild(el("summary", null, "schema"));
    let text;
    try { text = JSON.stringify(schema, null, 2); } catch (e) { text = String(schema); }
    shown.appendChild(el("pre", null, text));
    row.appendChild(label);
    row.appendChild(area);
    row.appendChild(problem);
    row.appendChild(shown);
    function read() {
      let value;
      try { value = JSON.parse(area.value); } catch (e) { return { problem: "not JSON: " + e.message }; }
      if (!isObject(value)) return { problem: "the answer must be a JSON object ({...})" };
      return { value: value, present: true };
    }
    return { row: row, control: area, problem: problem, read: read };
  }

  // The form for one question. `actions.submit(content)`, `.decline()` and `.cancel()` return
  // promises; a rejection's message (the server's 400) is shown beside the form.
  function build(schema, actions) {
    formCount += 1;
    const ids = "input-form-" + formCount;
    const form = el("form", "input-form");
    form.noValidate = true; // the messages below are the page's own, the same in every browser
    let structured = supported(schema);
    const fields = [];
    if (structured) {
      try {
        const required = Array.isArray(schema.required) ? schema.required : [];
        let i = 0;
        for (const key of Object.keys(schema.properties)) {
          i += 1;
          const f = field(key, schema.properties[key], required.indexOf(key) >= 0, ids + "-" + i);
          f.key = key;
          fields.push(f);
        }
        for (const f of fields) form.appendChild(f.row);
        if (required.length) form.appendChild(el("div", "hint", "* required"));
      } catch (e) { // a value the browser refuses somewhere in the schema: answer it as JSON
        structured = false;
        fields.length = 0;
      }
    }
    if (!structured) {
      const f = jsonField(schema, ids);
      fields.push(f);
      form.appendChild(f.row);
    }
    const error = el("div", "form-error");
    error.setAttribute("role", "alert");
    const buttons = el("div", "form-buttons");
    const submit = el("button", "submit-answer", "Submit");
    submit.type = "submit";
    const decline = el("button", "decline", "Decline");
    decline.type = "button";
    decline.title = "Do not answer: the tool is told you declined";
    const cancel = el("button", "cancel", "Cancel");
    cancel.type = "button";
    cancel.title = "Dismiss the question: the tool is told it was cancelled";
    buttons.appendChild(submit);
    buttons.appendChild(decline);
    buttons.appendChild(cancel);
    form.appendChild(error);
    form.appendChild(buttons);

    function busy(on) {
      for (const b of [submit, decline, cancel]) b.disabled = on;
      form.setAttribute("aria-busy", on ? "true" : "false");
    }
    async function run(action, arg, button) {
      error.textContent = "";
      busy(true);
      try { await action(arg); }
      catch (err) {
        error.textContent = err.message || String(err);
        busy(false);
        // the disabled button lost the focus: give it back, to go on from the keyboard
        if (!document.activeElement || document.activeElement === document.body) button.focus();
      }
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      let content = {};
      let first = null;
      for (const f of fields) {
        const got = f.read();
        f.problem.textContent = got.problem || "";
        f.control.setAttribute("aria-invalid", got.problem ? "true" : "false");
        if (got.problem) { if (!first) first = f.control; continue; }
        if (!got.present) continue;
        if (f.key === undefined) { content = got.value; continue; } // the JSON textarea's object
        // a key such as "__proto__" is an own property like any other, never the prototype
        Object.defineProperty(content, f.key,
          { value: got.value, enumerable: true, writable: true, configurable: true });
      }
      if (first) {
        error.textContent = "Check the fields marked above.";
        first.focus();
        return;
      }
      run(actions.submit, content, submit);
    });
    decline.addEventListener("click", function () { run(actions.decline, undefined, decline); });
    cancel.addEventListener("click", function () { run(actions.cancel, undefined, cancel); });
    return {
      el: form,
      focus: function () { if (fields.length) fields[0].control.focus({ preventScroll: true }); },
    };
  }

  window.agentcoreInputForm = { build: build, supported: supported };
})();
