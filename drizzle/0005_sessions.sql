CREATE TABLE `session_recordings` (
	`node_id` text NOT NULL,
	`pot_id` text NOT NULL,
	`session` text NOT NULL,
	`size` integer NOT NULL,
	`sha256` text NOT NULL,
	`data` blob NOT NULL,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`node_id`, `pot_id`, `session`)
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` integer PRIMARY KEY NOT NULL,
	`source_id` integer NOT NULL,
	`session` text NOT NULL,
	`src_ip` text,
	`start_ts` integer NOT NULL,
	`end_ts` integer NOT NULL,
	`first_event_id` integer NOT NULL,
	`last_event_id` integer NOT NULL,
	`events` integer NOT NULL,
	`login_success` integer DEFAULT 0 NOT NULL,
	`username` text,
	`password` text,
	`commands` integer DEFAULT 0 NOT NULL,
	`files` integer DEFAULT 0 NOT NULL,
	`ttylog` integer DEFAULT 0 NOT NULL,
	`closed` integer DEFAULT 0 NOT NULL,
	`segs` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sessions_login` ON `sessions` (`id`) WHERE login_success = 1;--> statement-breakpoint
CREATE INDEX `sessions_commands` ON `sessions` (`id`) WHERE commands > 0;--> statement-breakpoint
CREATE INDEX `sessions_files` ON `sessions` (`id`) WHERE files > 0;