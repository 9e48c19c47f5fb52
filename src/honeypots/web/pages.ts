/**
 * The rest of the fake site: nginx's Debian welcome page, a small PHP login portal (index.php,
 * which gives credential-stuffing bots a form to post to), robots.txt pointing at folders that
 * draw scanners, and the bait .env: a Laravel environment file whose credentials are fake but
 * stable per pot (derived from a seed), so an attacker who comes back, or tries them elsewhere,
 * can be recognised.
 */
import { createHash } from "node:crypto";

export const NGINX_WELCOME_PAGE = `<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#039;" })[c]!);

export function loginPage(title: string, error: string | null, username = ""): string {
  const notice = error ? `\n      <div class="alert">${escapeHtml(error)}</div>` : "";
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)} - Sign in</title>
  <style>
    body { font-family: Arial, Helvetica, sans-serif; background: #f2f4f7; }
    .box { width: 320px; margin: 120px auto; background: #fff; padding: 24px 28px; border: 1px solid #d0d5dd; border-radius: 4px; }
    h1 { font-size: 20px; margin: 0 0 16px; }
    label { display: block; margin: 12px 0 4px; font-size: 13px; }
    input[type=text], input[type=password] { width: 100%; padding: 7px; box-sizing: border-box; }
    button { margin-top: 18px; width: 100%; padding: 8px; background: #1d4ed8; color: #fff; border: 0; }
    .alert { background: #fde8e8; color: #9b1c1c; padding: 8px; font-size: 13px; }
  </style>
</head>
<body>
  <div class="box">
    <h1>${escapeHtml(title)}</h1>${notice}
    <form method="post" action="/index.php">
      <label for="username">Username</label>
      <input type="text" id="username" name="username" value="${escapeHtml(username)}" autocomplete="username">
      <label for="password">Password</label>
      <input type="password" id="password" name="password" autocomplete="current-password">
      <button type="submit">Sign in</button>
    </form>
  </div>
</body>
</html>
`;
}

export const ROBOTS_TXT = `User-agent: *
Disallow: /admin/
Disallow: /backup/
Disallow: /includes/
Disallow: /index.php?page=
`;

/** Deterministic text of a given alphabet from a seed, so bait values stay the same across restarts. */
function derive(seed: string, label: string, alphabet: string, length: number): string {
  const bytes = createHash("sha512").update(`${seed}\0${label}`).digest();
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[bytes[i % bytes.length]! % alphabet.length];
  return out;
}

const UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function envBait(seed: string, host: string): string {
  const key = createHash("sha256").update(`${seed}\0app_key`).digest("base64");
  return `APP_NAME=Laravel
APP_ENV=production
APP_KEY=base64:${key}
APP_DEBUG=false
APP_URL=http://${host}

LOG_CHANNEL=stack
LOG_LEVEL=error

DB_CONNECTION=mysql
DB_HOST=127.0.0.1
DB_PORT=3306
DB_DATABASE=portal
DB_USERNAME=portal
DB_PASSWORD=${derive(seed, "db", ALNUM, 20)}

BROADCAST_DRIVER=log
CACHE_DRIVER=file
QUEUE_CONNECTION=sync
SESSION_DRIVER=file
SESSION_LIFETIME=120

REDIS_HOST=127.0.0.1
REDIS_PASSWORD=null
REDIS_PORT=6379

MAIL_MAILER=smtp
MAIL_HOST=smtp.mailgun.org
MAIL_PORT=587
MAIL_USERNAME=postmaster@mg.${host}
MAIL_PASSWORD=${derive(seed, "mail", ALNUM, 32)}
MAIL_ENCRYPTION=tls
MAIL_FROM_ADDRESS=noreply@${host}

AWS_ACCESS_KEY_ID=AKIA${derive(seed, "aws-id", UPPER_DIGITS, 16)}
AWS_SECRET_ACCESS_KEY=${derive(seed, "aws-secret", `${ALNUM}+/`, 40)}
AWS_DEFAULT_REGION=eu-west-1
AWS_BUCKET=portal-backups
`;
}
