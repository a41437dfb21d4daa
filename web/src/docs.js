// The API reference page (/docs): Swagger UI over the server's own OpenAPI document. Everything
// is served by the binary: no validator badge (it would call validator.swagger.io), no other host.
// "Try it out" sends the session cookie of a signed-in browser, or the token given to "Authorize".
/* global SwaggerUIBundle */
const root = document.getElementById('api');
window.ui = SwaggerUIBundle({
  url: root.dataset.spec,
  domNode: root,
  validatorUrl: null,
  deepLinking: true,
  withCredentials: true,
  defaultModelsExpandDepth: 0,
  docExpansion: 'list',
});
