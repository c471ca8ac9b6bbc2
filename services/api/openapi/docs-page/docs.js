// Renders /openapi.json with Swagger UI (swagger-ui-dist, served by this API from
// node_modules). Offline: no validator badge (it would send the document to
// validator.swagger.io), nothing loaded from anywhere but this origin.
'use strict';
window.ui = window.SwaggerUIBundle({
  url: '/openapi.json',
  domNode: document.getElementById('reference'),
  validatorUrl: null,
  deepLinking: true,
  displayOperationId: false,
  displayRequestDuration: true,
  defaultModelsExpandDepth: 0,
  docExpansion: 'list',
  filter: true,
  showExtensions: false,
  showCommonExtensions: true,
  // The key typed into Authorize stays in this tab's memory only.
  persistAuthorization: false,
  tryItOutEnabled: false,
});
