// Loaded in <head> (not a module), before any web font can finish loading.
//
// Chinese glyphs come from a served web font split into unicode-range slices, fetched when a
// page first shows one of their characters. Chromium lays such text out at once with the
// fonts it has, and when the slice arrives it does not lay out again the text whose first
// available font is a local one (every text here, on a machine with any Latin font): those
// characters stay drawn as boxes. So each time slices finish loading, the page's inherited
// font description changes (letter-spacing: 0.001 px <-> normal, drawn the same), which makes
// Chromium shape all text again, with the slices now there.
(function () {
  if (!document.fonts || !document.fonts.addEventListener) return;
  document.fonts.addEventListener("loadingdone", function () {
    document.documentElement.classList.toggle("fonts-reshaped");
  });
})();
