/**
 * The API reference page at /docs: Swagger UI over /openapi.json. Its script and stylesheet are
 * static assets bundled from npm at build time (src/openapi/build-docs.ts), so the page needs no
 * network beyond this worker. The validator badge is off: it would call validator.swagger.io.
 * Its one script of its own is a file too (DOCS_SCRIPT at /docs/reference.js), for the CSP.
 */
/** The files under /docs/, copied from swagger-ui-dist (its licence included). */
export const DOCS_ASSETS = ["swagger-ui-bundle.js", "swagger-ui.css", "LICENSE", "NOTICE"] as const;

export const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>agent-run-edge API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/reference.js"></script>
</body>
</html>
`;

/** The page's own script, served by the worker as a file: the CSP allows no inline script. */
export const DOCS_SCRIPT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#reference",
  validatorUrl: null,
  deepLinking: true,
  persistAuthorization: false,
  tryItOutEnabled: false,
});
`;
