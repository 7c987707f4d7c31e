// A client-side script: not an endpoint (its name is not a verb), so it is served as-is.
document.addEventListener('DOMContentLoaded', () => {
  const marker = document.getElementById('marker');
  if (marker) marker.textContent = 'Client script ran: /js/app.js is a static asset.';
  document.documentElement.dataset.appJs = 'ran';
});
