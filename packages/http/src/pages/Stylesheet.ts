/**
 * The pages' one stylesheet, served at /assets/convene.css (the pages' Content-Security-Policy allows styles
 * from this server only, and no inline style). The system's fonts (no download), one narrow centred column,
 * text and controls at WCAG AA contrast or better in light and dark schemes, and a visible focus ring on every
 * control.
 */
import { createHash } from "node:crypto"

/** Where the stylesheet is served. */
export const path = "/assets/convene.css"

export const contentType = "text/css; charset=utf-8"

export const css = `/* Convene: sign-in, consent and account pages. */
:root {
  color-scheme: light dark;
  --text: #1b1f24;
  --muted: #4a5260;
  --background: #ffffff;
  --surface: #f4f6f8;
  --border: #8a93a0;
  --accent: #0b57d0;
  --accent-text: #ffffff;
  --danger: #b3261e;
  --danger-surface: #fdecea;
  --notice-surface: #e8f0fe;
  --focus: #0b57d0;
}

@media (prefers-color-scheme: dark) {
  :root {
    --text: #e6e9ed;
    --muted: #b4bcc7;
    --background: #14171b;
    --surface: #1f242a;
    --border: #7d8794;
    --accent: #8ab4f8;
    --accent-text: #0b1b33;
    --danger: #f2b8b5;
    --danger-surface: #3a1d1b;
    --notice-surface: #1b2a44;
    --focus: #8ab4f8;
  }
}

*, *::before, *::after { box-sizing: border-box; }

html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }

body {
  margin: 0;
  padding: 1.5rem 1rem 3rem;
  background: var(--background);
  color: var(--text);
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "Liberation Sans", sans-serif;
  font-size: 1rem;
  line-height: 1.5;
}

header, main { max-width: 34rem; margin: 0 auto; }
main.wide { max-width: 52rem; }

header {
  display: flex;
  flex-wrap: wrap;
  align-items: center;
  justify-content: space-between;
  gap: 0.5rem 1rem;
  margin-bottom: 1.5rem;
  color: var(--muted);
}
.brand { font-weight: 700; color: var(--text); margin: 0; }
header form { margin: 0; }

h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 1rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.75rem; }
p { margin: 0 0 1rem; }
code {
  font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace;
  font-size: 0.92em;
  overflow-wrap: anywhere;
}
a { color: var(--accent); text-underline-offset: 0.15em; }
.muted, .hint { color: var(--muted); }
.hint { font-size: 0.92rem; margin: 0.25rem 0 0; }

.field { margin: 0 0 1.25rem; }
label, legend { display: block; font-weight: 600; margin-bottom: 0.35rem; }
fieldset { border: 1px solid var(--border); border-radius: 0.5rem; margin: 0 0 1.25rem; padding: 0.75rem 1rem 0.5rem; }
legend { padding: 0 0.35rem; margin-bottom: 0; }
.choice { display: flex; align-items: flex-start; gap: 0.6rem; margin: 0.5rem 0; }
.choice label { font-weight: 400; margin: 0; }
.choice input { margin-top: 0.3rem; flex: none; }

input[type="email"], input[type="password"], input[type="text"], select {
  display: block;
  width: 100%;
  min-height: 2.75rem;
  padding: 0.5rem 0.75rem;
  border: 1px solid var(--border);
  border-radius: 0.375rem;
  background: var(--background);
  color: var(--text);
  font: inherit;
}
input[readonly] { background: var(--surface); font-family: ui-monospace, Menlo, Consolas, "Liberation Mono", monospace; }
input[type="checkbox"], input[type="radio"] { width: 1.15rem; height: 1.15rem; accent-color: var(--accent); }
input:disabled, select:disabled, button:disabled { opacity: 0.6; cursor: not-allowed; }
input:disabled + label { color: var(--muted); }
[aria-invalid="true"] { border-color: var(--danger); border-width: 2px; }

button {
  min-height: 2.75rem;
  padding: 0.5rem 1.25rem;
  border: 2px solid var(--accent);
  border-radius: 0.375rem;
  background: var(--accent);
  color: var(--accent-text);
  font: inherit;
  font-weight: 600;
  cursor: pointer;
}
button.secondary { background: transparent; color: var(--accent); }
button.small { min-height: 2.25rem; padding: 0.25rem 0.75rem; font-size: 0.92rem; }
.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; margin-top: 1.5rem; }

:focus { outline: none; }
:focus-visible, input:focus, select:focus {
  outline: 3px solid var(--focus);
  outline-offset: 2px;
}

.alert, .field-error { color: var(--danger); font-weight: 600; }
.alert {
  background: var(--danger-surface);
  border-left: 4px solid var(--danger);
  border-radius: 0.375rem;
  padding: 0.75rem 1rem;
  margin: 0 0 1.25rem;
}
.field-error { margin: 0.35rem 0 0; }
.notice {
  background: var(--notice-surface);
  border-left: 4px solid var(--accent);
  border-radius: 0.375rem;
  padding: 0.75rem 1rem;
  margin: 0 0 1.25rem;
}
.warning {
  background: var(--surface);
  border: 1px solid var(--border);
  border-radius: 0.5rem;
  padding: 0.75rem 1rem;
  margin: 1.25rem 0;
}

.scopes { list-style: none; padding: 0; margin: 0 0 1rem; }
.scopes li { padding: 0.6rem 0.75rem; border: 1px solid var(--border); border-radius: 0.375rem; margin-bottom: 0.5rem; }
.scopes code { display: block; color: var(--muted); }

.issued { border: 2px solid var(--accent); border-radius: 0.5rem; padding: 1rem; margin: 0 0 1.5rem; }
.issued h2 { margin-top: 0; }

.table-wrap { overflow-x: auto; }
table { width: 100%; border-collapse: collapse; font-size: 0.95rem; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.5rem; }
th, td { text-align: left; vertical-align: top; padding: 0.5rem; border-bottom: 1px solid var(--border); }
td form { margin: 0; }

.visually-hidden {
  position: absolute;
  width: 1px;
  height: 1px;
  padding: 0;
  margin: -1px;
  overflow: hidden;
  clip: rect(0 0 0 0);
  white-space: nowrap;
  border: 0;
}

@media (forced-colors: active) {
  :focus-visible, input:focus, select:focus { outline-color: Highlight; }
}
`

/** A strong validator of the text (SHA-256, base64url, 27 characters: 162 bits), quoted as an ETag. */
export const etag = `"${createHash("sha256").update(css).digest("base64url").slice(0, 27)}"`
