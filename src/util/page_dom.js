  // The pages' DOM helpers (spoor report, spoor triage): spliced into each template's script
  // where it says "@include <path of page_dom.js>", when the template is compiled in.
  // Text as the page shows it (names, paths, messages come from dumps and ELFs): a
  // bidirectional formatting character (U+202E, ...) would reorder the text around it, so it
  // is shown as its code point, "<U+202E>". Every text of the page goes through here.
  function shown(text) {
    return String(text).replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, function (c) {
      return "<U+" + c.charCodeAt(0).toString(16).toUpperCase() + ">";
    });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = shown(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      parent.appendChild(typeof c === "string" ? document.createTextNode(shown(c)) : c);
    }
    return parent;
  }
