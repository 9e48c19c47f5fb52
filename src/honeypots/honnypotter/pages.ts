/**
 * The HTML a WordPress 6.7 site behind Debian 12's nginx sends: the login form (markup as
 * wp-login.php prints it, so scanners that fingerprint the page find WordPress) and nginx's own
 * error pages.
 */

export const WP_VERSION = "6.7.1";
export const NGINX = "nginx/1.22.1";

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#039;" })[c] as string);
}

export interface LoginPage {
  siteUrl: string;
  siteName: string;
  errors: string[];
  userLogin: string;
}

export function loginPage({ siteUrl, siteName, errors, userLogin }: LoginPage): string {
  const site = escapeHtml(siteUrl);
  const css = (id: string, path: string) => `<link rel='stylesheet' id='${id}-css' href='${site}/${path}?ver=${WP_VERSION}' media='all' />\n`;
  const notice = errors.length > 0 ? `<div id="login_error" class="notice notice-error"><p>${errors.join("<br />\n")}</p></div>\n` : "";
  return `<!DOCTYPE html>
<html lang="en-US">
<head>
	<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
	<title>Log In &lsaquo; ${escapeHtml(siteName)} &#8212; WordPress</title>
	<meta name='robots' content='max-image-preview:large, noindex, noarchive' />
${css("dashicons", "wp-includes/css/dashicons.min.css")}${css("buttons", "wp-includes/css/buttons.min.css")}${css("forms", "wp-admin/css/forms.min.css")}${css("l10n", "wp-admin/css/l10n.min.css")}${css("login", "wp-admin/css/login.min.css")}	<meta name='referrer' content='strict-origin-when-cross-origin' />
		<meta name="viewport" content="width=device-width, initial-scale=1.0" />
		</head>
	<body class="login no-js login-action-login wp-core-ui  locale-en-us">
	<script type="text/javascript">
/* <![CDATA[ */
document.body.className = document.body.className.replace('no-js','js');
/* ]]> */
</script>

				<h1 class="screen-reader-text">Log In</h1>
			<div id="login">
		<h1 role="presentation" class="wp-login-logo"><a href="https://wordpress.org/">Powered by WordPress</a></h1>
	${notice}
		<form name="loginform" id="loginform" action="${site}/wp-login.php" method="post">
			<p>
				<label for="user_login">Username or Email Address</label>
				<input type="text" name="log" id="user_login" class="input" value="${escapeHtml(userLogin)}" size="20" autocapitalize="off" autocomplete="username" required="required" />
			</p>

			<div class="user-pass-wrap">
				<label for="user_pass">Password</label>
				<div class="wp-pwd">
					<input type="password" name="pwd" id="user_pass" class="input password-input" value="" size="20" autocomplete="current-password" spellcheck="false" required="required" />
					<button type="button" class="button button-secondary wp-hide-pw hide-if-no-js" data-toggle="0" aria-label="Show password">
						<span class="dashicons dashicons-visibility" aria-hidden="true"></span>
					</button>
				</div>
			</div>
						<p class="forgetmenot"><input name="rememberme" type="checkbox" id="rememberme" value="forever"  /> <label for="rememberme">Remember Me</label></p>
			<p class="submit">
				<input type="submit" name="wp-submit" id="wp-submit" class="button button-primary button-large" value="Log In" />
									<input type="hidden" name="redirect_to" value="${site}/wp-admin/" />
									<input type="hidden" name="testcookie" value="1" />
			</p>
		</form>

					<p id="nav">
				<a class="wp-login-lost-password" href="${site}/wp-login.php?action=lostpassword">Lost your password?</a>			</p>
			<script type="text/javascript">
/* <![CDATA[ */
function wp_attempt_focus() {setTimeout( function() {try {d = document.getElementById( "user_login" );d.focus(); d.select();} catch( er ) {}}, 200);}
wp_attempt_focus();
if ( typeof wpOnload === 'function' ) { wpOnload() }
/* ]]> */
</script>
		<p id="backtoblog">
			<a href="${site}/">&larr; Go to ${escapeHtml(siteName)}</a>		</p>
			</div>
				<script type="text/javascript" src="${site}/wp-includes/js/clipboard.min.js?ver=2.0.11" id="clipboard-js"></script>
<script type="text/javascript" src="${site}/wp-includes/js/jquery/jquery.min.js?ver=3.7.1" id="jquery-core-js"></script>
<script type="text/javascript" src="${site}/wp-includes/js/jquery/jquery-migrate.min.js?ver=3.4.1" id="jquery-migrate-js"></script>
<script type="text/javascript" src="${site}/wp-includes/js/dist/hooks.min.js?ver=4d63a3d491d11ffd8ac6" id="wp-hooks-js"></script>
<script type="text/javascript" src="${site}/wp-includes/js/dist/i18n.min.js?ver=5e580eb46a90c2b997e6" id="wp-i18n-js"></script>
<script type="text/javascript" src="${site}/wp-admin/js/user-profile.min.js?ver=${WP_VERSION}" id="user-profile-js"></script>
	<div class="clear"></div>
	</body>
	</html>
	`;
}

export function notFoundPage(siteUrl: string, siteName: string): string {
  const site = escapeHtml(siteUrl);
  return `<!DOCTYPE html>
<html lang="en-US">
<head>
	<meta charset="UTF-8" />
	<meta name="viewport" content="width=device-width, initial-scale=1" />
<meta name='robots' content='max-image-preview:large' />
	<title>Page not found &#8211; ${escapeHtml(siteName)}</title>
<link rel="alternate" type="application/rss+xml" title="${escapeHtml(siteName)} &raquo; Feed" href="${site}/feed/" />
<meta name="generator" content="WordPress ${WP_VERSION}" />
</head>
<body class="error404 wp-embed-responsive">
<main class="wp-block-group">
	<h1 class="wp-block-heading">Page Not Found</h1>
	<p>The page you are looking for does not exist, or it has been moved. Please try searching using the form below.</p>
	<form role="search" method="get" action="${site}/" class="wp-block-search"><input class="wp-block-search__input" type="search" name="s" value="" required /><button type="submit">Search</button></form>
</main>
</body>
</html>
`;
}

/** nginx's built-in error page, byte for byte. */
export function nginxErrorPage(status: number, reason: string): string {
  return `<html>\r\n<head><title>${status} ${reason}</title></head>\r\n<body>\r\n<center><h1>${status} ${reason}</h1></center>\r\n<hr><center>${NGINX}</center>\r\n</body>\r\n</html>\r\n`;
}
