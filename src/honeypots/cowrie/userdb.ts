/**
 * Which logins succeed. Rules are "user:password", separated by commas or newlines and tried in
 * order; the first rule whose user and password match decides. `*` matches any user or password;
 * a password starting with `!` makes the rule a refusal. This is Cowrie's userdb.txt without the
 * uid column, so "root:!root,root:*" reads as it does there.
 */

export interface Rule {
  user: string;
  password: string;
  refuse: boolean;
}

export function parseUserDb(spec: string): Rule[] {
  return spec
    .split(/[,\n]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry.includes(":"))
    .map((entry) => {
      const cut = entry.indexOf(":");
      const password = entry.slice(cut + 1);
      const refuse = password.startsWith("!");
      return { user: entry.slice(0, cut), password: refuse ? password.slice(1) : password, refuse };
    });
}

export function allows(rules: Rule[], user: string, password: string): boolean {
  for (const rule of rules) {
    if (rule.user !== "*" && rule.user !== user) continue;
    if (rule.password !== "*" && rule.password !== password) continue;
    return !rule.refuse;
  }
  return false;
}
