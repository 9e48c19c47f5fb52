/**
 * What wp-login.php decides for a POST, with WordPress 6.x's own messages: which errors it shows,
 * and whether the request counts as a login attempt (WordPress fires wp_login_failed, the hook
 * HonnyPotter listens to, only when both fields are filled; we also record a half-filled form,
 * since a bot sending only `log` is still guessing).
 */
import { escapeHtml } from "./pages.ts";

export interface LoginOutcome {
  /** HTML fragments, one per WordPress error, in WordPress' order. */
  errors: string[];
  username: string;
  password: string;
  attempted: boolean;
}

export interface LoginSite {
  users: Set<string>;
  lostPasswordUrl: string;
}

const COOKIES_URL = "https://developer.wordpress.org/advanced-administration/wordpress/cookies/#enable-cookies-in-your-browser";

export function attemptLogin(fields: Map<string, string>, hasTestCookie: boolean, site: LoginSite): LoginOutcome {
  const username = (fields.get("log") ?? "").trim();
  const password = fields.get("pwd") ?? "";
  // A POST without any field is treated by wp-login.php as a plain visit to the form.
  if (fields.size === 0) return { errors: [], username, password, attempted: false };
  const name = escapeHtml(username);
  const errors: string[] = [];
  if (username === "") errors.push("<strong>Error:</strong> The username field is empty.");
  if (password.trim() === "") errors.push("<strong>Error:</strong> The password field is empty.");
  if (errors.length === 0) {
    if (username.includes("@")) errors.push("<strong>Error:</strong> Unknown email address. Check again or try your username.");
    else if (!site.users.has(username)) {
      errors.push(`<strong>Error:</strong> The username <strong>${name}</strong> is not registered on this site. If you are unsure of your username, try your email address instead.`);
    } else {
      errors.push(`<strong>Error:</strong> The password you entered for the username <strong>${name}</strong> is incorrect. <a href="${site.lostPasswordUrl}">Lost your password?</a>`);
    }
  }
  // wp-login.php replaces every other error when the form says it set a test cookie we never got.
  const cookieBlocked = fields.has("testcookie") && !hasTestCookie;
  return {
    errors: cookieBlocked ? [`<strong>Error:</strong> Cookies are blocked or not supported by your browser. You must <a href="${COOKIES_URL}">enable cookies</a> to use WordPress.`] : errors,
    username,
    password,
    attempted: username !== "" || password !== "",
  };
}
