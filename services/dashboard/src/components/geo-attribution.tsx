/**
 * Country, region and city come from DB-IP's "IP to City Lite" data (CC BY 4.0):
 * every page that shows figures derived from it must carry this credit, with
 * this link text and target. A plain link: nothing is fetched from db-ip.com.
 */
export function GeoAttribution() {
  return (
    <p class="attribution" data-attribution="db-ip">
      <a href="https://db-ip.com">IP Geolocation by DB-IP</a>
    </p>
  );
}
