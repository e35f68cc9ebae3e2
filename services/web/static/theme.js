// Runs before the page paints: apply the theme remembered in this browser, if any.
// Without one the page follows the system setting (prefers-color-scheme in the CSS).
(function () {
  try {
    var theme = localStorage.getItem("arena-theme");
    if (theme === "dark" || theme === "light") {
      document.documentElement.setAttribute("data-theme", theme);
    }
  } catch (e) { /* storage disabled: follow the system */ }
})();
