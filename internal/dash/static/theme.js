// grit's dashboard: the theme an operator chose with the toggle (kept in
// localStorage), applied before the page is drawn so that it never
// flashes the other one. Without a choice, the browser's preference
// (prefers-color-scheme) picks.
(function () {
  try {
    var t = localStorage.getItem("grit-theme");
    if (t === "dark" || t === "light") document.documentElement.setAttribute("data-theme", t);
  } catch (e) {}
})();
