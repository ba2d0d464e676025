// Navin dashboard: live validation and preview for the plan editor. The page works
// without this script (the form posts and the server validates); with it, each change
// is checked by the server's plan parser, the same one `navin plan validate` runs.
(function () {
  "use strict";
  var text = document.getElementById("plan-text");
  if (!text) { return; }
  var status = document.getElementById("validation");
  var preview = document.getElementById("preview");
  var meta = document.querySelector('meta[name="csrf-token"]');
  var url = text.getAttribute("data-validate-url");
  var timer = null;
  var sent = 0;

  function lineStart(value, line) {
    var pos = 0;
    for (var i = 1; i < line; i++) {
      var next = value.indexOf("\n", pos);
      if (next < 0) { return value.length; }
      pos = next + 1;
    }
    return pos;
  }

  function show(result) {
    status.textContent = "";
    if (result.ok) {
      status.setAttribute("data-state", "ok");
      status.removeAttribute("data-line");
      status.textContent = "Valid plan (hash " + result.hash + ")";
    } else {
      status.setAttribute("data-state", "error");
      if (result.line) { status.setAttribute("data-line", String(result.line)); }
      else { status.removeAttribute("data-line"); }
      var link = document.createElement("a");
      link.href = "#plan-text";
      link.className = "problem";
      // The parser's own words, as `navin plan validate` prints them.
      link.textContent = result.message;
      link.addEventListener("click", function (event) {
        event.preventDefault();
        if (!result.line) { return; }
        var start = lineStart(text.value, result.line);
        var end = text.value.indexOf("\n", start);
        text.focus();
        text.setSelectionRange(start, end < 0 ? text.value.length : end);
      });
      status.appendChild(link);
    }
    if (preview && typeof result.preview_html === "string") {
      // Rendered by the server with raw HTML escaped and unsafe links removed.
      preview.innerHTML = result.preview_html;
    }
  }

  function validate() {
    var mine = ++sent;
    status.setAttribute("data-state", "pending");
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": meta ? meta.content : "" },
      body: JSON.stringify({ text: text.value })
    }).then(function (response) {
      if (!response.ok) { throw new Error("the server answered " + response.status); }
      return response.json();
    }).then(function (result) {
      if (mine === sent) { show(result); }
    }).catch(function (error) {
      if (mine === sent) {
        status.setAttribute("data-state", "unavailable");
        status.textContent = "Could not check the plan just now (" + error.message + "); saving still checks it.";
      }
    });
  }

  text.addEventListener("input", function () {
    if (timer) { clearTimeout(timer); }
    timer = setTimeout(validate, 250);
  });
  validate();
})();
