import { describe, expect, it } from 'vitest';
import { intentUrlProblem } from './intent-url.ts';

describe('intentUrlProblem', () => {
  it.each([
    'myapp://sale',
    'intent://sale#Intent;scheme=myapp;package=com.example.app;end',
    'intent://sale#Intent;scheme=myapp;package=com.example;S.browser_fallback_url=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1;end',
    'intent://scan/#Intent;scheme=zxing;action=android.intent.action.VIEW;category=android.intent.category.BROWSABLE;component=com.google.zxing.client.android/.CaptureActivity;end',
    'intent://x#Intent;scheme=myapp;S.title=Hello%20world;i.count=3;SEL;end',
    'intent://x',
    'intent://x#Intent;scheme=myapp',
  ])('accepts %s', (value) => {
    expect(intentUrlProblem(value)).toBeNull();
  });

  it.each([
    ['intent://x#Intent;scheme=javascript;end', /scheme javascript/],
    ['INTENT://x#INTENT;scheme=Data;end', /scheme data/],
    ['intent://x#Intent;scheme=intent;end', /scheme intent/],
    ['intent://x#Intent;scheme=java%20script;end', /must be a URL scheme/],
    ['intent://x#Intent;scheme=myapp;S.browser_fallback_url=javascript:alert(1);end', /http\(s\)/],
    ['intent://x#Intent;scheme=myapp;S.browser_fallback_url=%6Aavascript%3Aalert(1);end', /http\(s\)/],
    ['intent://x#Intent;scheme=myapp;S.browser_fallback_url=ftp%3A%2F%2Fexample.com;end', /http\(s\)/],
    ['intent://x#Intent;scheme=myapp;S.url=%20javascript:alert(1);end', /must not be a javascript: URL/],
    ['intent://x#Intent;scheme=myapp;S.url=java%09script:alert(1);end', /must not be a javascript: URL/],
    ['intent://x#Intent;scheme=myapp;package=com.x;alert(1)//;end', /key=value/],
    ['intent://x#Intent;package=com example;end', /Java name/],
    ['intent://x#Intent;component=com.x;end', /package\/class/],
    ['intent://x#Intent;scheme=myapp;S.a=%E0%A4%A;end', /malformed/],
    ['intent://x#Intent;scheme=myapp;end;scheme=javascript', /after end/],
    ['myapp://x#Intent;S.browser_fallback_url=javascript:alert(1);end', /#Intent;/],
  ])('refuses %s', (value, reason) => {
    expect(intentUrlProblem(value)).toMatch(reason);
  });
});
