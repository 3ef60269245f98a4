// @ts-check
// Loaded in <head> (not a module), before any web font can finish loading.
//
// Chinese glyphs come from a served web font split into unicode-range slices, fetched when a
// page first shows one of their characters. Chromium lays such text out at once with the
// fonts it has, and when the slice arrives it does not lay out again the text whose first
// available font is a local one (every text here, on a machine with any Latin font): those
// characters stay drawn as boxes. So each time slices finish loading, the page's inherited
// font description changes (a letter-spacing of a few ten-thousandths of a pixel, drawn the
// same), which makes Chromium shape all text again, with the slices now there. A value never
// used before each time: going back to an earlier one (toggling between two) can find that
// text's shapes from before the slice came, boxes included, still cached for it.
(function () {
  if (!document.fonts || !document.fonts.addEventListener) return;
  var loads = 0;
  document.fonts.addEventListener("loadingdone", function () {
    loads += 1;
    document.documentElement.style.setProperty("--font-reshape", loads * 0.0001 + "px");
  });
})();
