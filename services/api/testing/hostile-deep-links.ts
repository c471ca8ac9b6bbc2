/** Deep-link values whose parts would run code or leave the web: refused with a 400 on links and rules. */
export const hostileDeepLinks: Array<[field: string, value: string]> = [
  ['deepLinkAndroid', 'intent://x#Intent;scheme=javascript;end'],
  ['deepLinkAndroid', 'intent://x#Intent;scheme=JavaScript;package=com.example;end'],
  ['deepLinkAndroid', 'intent://x#Intent;scheme=myapp;S.browser_fallback_url=javascript:alert(1);end'],
  ['deepLinkAndroid', 'intent://x#Intent;scheme=myapp;S.browser_fallback_url=javascript%3Aalert(1);end'],
  ['deepLinkAndroid', 'intent://x#Intent;scheme=myapp;S.browser_fallback_url=data%3Atext%2Fhtml%2C%3Cscript%3E;end'],
  ['deepLinkAndroid', 'intent://x#Intent;scheme=myapp;S.browser_fallback_url=file%3A%2F%2F%2Fetc%2Fpasswd;end'],
  ['deepLinkAndroid', 'intent://x#Intent;scheme=myapp;S.browser_fallback_url=%zz;end'],
  ['deepLinkAndroid', 'intent://x#Intent;scheme=myapp;end;S.browser_fallback_url=javascript:alert(1)'],
  ['deepLinkAndroid', 'intent:#Intent;scheme=data;end'],
  ['deepLinkAndroid', 'myapp://x#Intent;S.browser_fallback_url=javascript:alert(1);end'],
  ['deepLinkIos', 'intent://x#Intent;scheme=vbscript;end'],
];
