/** The authorization server's HTML pages: the escaping template, the pages, and their stylesheet. */
export * as Html from "./Html.js"
export * as Pages from "./Pages.js"
export * as Stylesheet from "./Stylesheet.js"
