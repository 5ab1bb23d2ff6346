// grit's dashboard: live updates. The pages work without this script;
// with it, /live's server-sent events say when the store changed, and the
// page's main part is fetched again and swapped in, unless the visitor is
// typing in a form (their input would be lost).
(function () {
  var dot = document.getElementById("live");
  if (!window.EventSource || !dot) return;
  var busy = false, again = false;
  function editing() {
    var a = document.activeElement;
    // Rows ticked for an action are a form being filled in too.
    return (a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.tagName === "SELECT")) ||
      document.querySelector("input[type=checkbox][form]:checked") !== null;
  }
  function refresh() {
    if (busy) { again = true; return; }
    if (editing()) return;
    busy = true;
    fetch(location.href, { headers: { "X-Partial": "1" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html !== null && !editing()) document.getElementById("main").innerHTML = html;
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  var es = new EventSource("/live");
  es.addEventListener("open", function () { dot.classList.add("on"); });
  es.addEventListener("error", function () { dot.classList.remove("on"); });
  es.addEventListener("change", refresh);
})();

// Selection: the boxes ticked in a list, for the actions on many. It
// lives outside the live refresh above, on the document, so that it
// works on a main part swapped in.
function ticked(form) {
  return document.querySelectorAll('input[type=checkbox][form="' + form + '"]:not(.selall):checked').length;
}
function noun(f) { return f.getAttribute("data-noun") || "task"; }
(function () {
  function update(form) {
    var n = ticked(form), all = document.querySelectorAll('input[type=checkbox][form="' + form + '"]:not(.selall)').length;
    document.querySelectorAll("#" + form + " .selcount").forEach(function (c) { c.textContent = n.toLocaleString("en-US"); });
    document.querySelectorAll('input.selall[form="' + form + '"]').forEach(function (c) {
      c.checked = all > 0 && n === all;
      c.indeterminate = n > 0 && n < all;
    });
  }
  document.addEventListener("change", function (e) {
    var box = e.target, form = box.getAttribute && box.getAttribute("form");
    if (!form || box.type !== "checkbox") return;
    if (box.classList.contains("selall")) {
      document.querySelectorAll('input[type=checkbox][form="' + form + '"]:not(.selall)').forEach(function (c) { c.checked = box.checked; });
    }
    update(form);
  });
  // Buttons that act on many tasks ask first; one with data-confirm
  // says what it does, with {n} the rows ticked in its form.
  document.addEventListener("submit", function (e) {
    var b = e.submitter, f = e.target;
    if (!b) return;
    // f.id would name the form's control called "id" (the boxes ticked),
    // not the form's own id.
    var id = f.getAttribute("id"), n = id ? ticked(id) : 0;
    if (f.classList.contains("selbar") && n === 0) {
      alert("Nothing selected: tick the rows to act on first.");
      e.preventDefault();
      return;
    }
    var ask = b.getAttribute("data-confirm");
    if (ask) ask = ask.replace("{n}", n === 1 ? "1 " + noun(f) : n.toLocaleString("en-US") + " " + noun(f) + "s");
    else if (/all$/i.test(b.textContent.trim())) ask = b.textContent.trim() + ": are you sure?";
    if (ask && !confirm(ask)) e.preventDefault();
  });
})();

// The theme toggle: it switches to the other theme than the one shown,
// and keeps the choice, unless it is the browser's own (then the
// browser's preference rules again).
(function () {
  var b = document.getElementById("theme");
  if (!b) return;
  var dark = window.matchMedia("(prefers-color-scheme: dark)");
  b.addEventListener("click", function () {
    var root = document.documentElement;
    var shown = root.getAttribute("data-theme") || (dark.matches ? "dark" : "light");
    var next = shown === "dark" ? "light" : "dark";
    root.setAttribute("data-theme", next);
    try {
      if (next === (dark.matches ? "dark" : "light")) localStorage.removeItem("grit-theme");
      else localStorage.setItem("grit-theme", next);
    } catch (e) {}
  });
})();
