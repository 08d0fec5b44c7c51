// The serial console's colours. xterm.js's DOM renderer writes its colours into <style>
// elements, which the console's Content-Security-Policy (style-src 'self', no inline styles)
// refuses; so the build turns this palette into rules of app.css (termCSS), and the terminal
// gets the same palette as its theme.

export const theme = {
  background: "#1b1d1f",
  foreground: "#e6e6e6",
  cursor: "#f0f0f0",
  cursorAccent: "#1b1d1f",
  selectionBackground: "#3f6ea8",
  ansi: [
    "#2e3436", "#ef5350", "#8bc34a", "#f2c94c", "#64a8f0", "#c792ea", "#4dd0e1", "#d3d7cf",
    "#7f8c8d", "#ff7b72", "#a5d6a7", "#ffe082", "#90caf9", "#e1bee7", "#80deea", "#ffffff",
  ],
};

/** palette256 is xterm's 256 colours: the 16 above, a 6x6x6 cube, 24 greys. */
export function palette256() {
  const colors = [...theme.ansi];
  const steps = [0, 95, 135, 175, 215, 255];
  const hex = (r, g, b) => "#" + [r, g, b].map((v) => v.toString(16).padStart(2, "0")).join("");
  for (let r = 0; r < 6; r++) for (let g = 0; g < 6; g++) for (let b = 0; b < 6; b++) colors.push(hex(steps[r], steps[g], steps[b]));
  for (let i = 0; i < 24; i++) colors.push(hex(8 + i * 10, 8 + i * 10, 8 + i * 10));
  return colors;
}

/** termCSS is what xterm.js's refused <style> elements would have said, for every terminal. */
export function termCSS() {
  const t = theme;
  const rules = [
    `.xterm .xterm-rows { pointer-events: none; color: ${t.foreground}; font-kerning: none; white-space: pre; }`,
    `.xterm .xterm-rows span { display: inline-block; height: 100%; vertical-align: top; }`,
    `.xterm .xterm-rows .xterm-dim { opacity: 0.6; }`,
    `.xterm span.xterm-bold { font-weight: bold; }`,
    `.xterm span.xterm-italic { font-style: italic; }`,
    `.xterm .xterm-rows .xterm-cursor.xterm-cursor-block { background-color: ${t.cursor}; color: ${t.cursorAccent}; }`,
    `.xterm .xterm-rows .xterm-cursor.xterm-cursor-outline { outline: 1px solid ${t.cursor}; outline-offset: -1px; }`,
    `.xterm .xterm-rows .xterm-cursor.xterm-cursor-bar { box-shadow: 1px 0 0 ${t.cursor} inset; }`,
    `.xterm .xterm-rows .xterm-cursor.xterm-cursor-underline { border-bottom: 1px solid ${t.cursor}; height: calc(100% - 1px); }`,
    `.xterm .xterm-selection { position: absolute; top: 0; left: 0; z-index: 1; pointer-events: none; }`,
    `.xterm .xterm-selection div { position: absolute; background-color: ${t.selectionBackground}; opacity: 0.6; }`,
    `.xterm .xterm-fg-257 { color: ${t.background}; }`,
    `.xterm .xterm-bg-257 { background-color: ${t.foreground}; }`,
  ];
  palette256().forEach((c, i) => {
    rules.push(`.xterm .xterm-fg-${i} { color: ${c}; }`, `.xterm .xterm-bg-${i} { background-color: ${c}; }`);
  });
  return rules.join("\n") + "\n";
}
