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
    return a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.tagName === "SELECT");
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
  // Buttons that act on many tasks ask first.
  document.addEventListener("submit", function (e) {
    var b = e.submitter;
    if (b && /all$/i.test(b.textContent.trim()) && !confirm(b.textContent.trim() + ": are you sure?")) e.preventDefault();
  });
})();
