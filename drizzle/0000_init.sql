CREATE TABLE `commands` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`command_id` text NOT NULL,
	`node_id` text NOT NULL,
	`name` text NOT NULL,
	`pot_id` text,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`message` text,
	`source` text NOT NULL,
	`principal` text,
	`remote_addr` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `commands_command_id_unique` ON `commands` (`command_id`);--> statement-breakpoint
CREATE INDEX `commands_node` ON `commands` (`node_id`,`id`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY NOT NULL,
	`ts` integer NOT NULL,
	`node_id` text,
	`pot_id` text,
	`pot_type` text,
	`event_type` text NOT NULL,
	`src_ip` text,
	`data` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_ts` ON `events` (`ts`);--> statement-breakpoint
CREATE TABLE `honeypots` (
	`node_id` text NOT NULL,
	`pot_id` text NOT NULL,
	`pot_type` text NOT NULL,
	`status` text NOT NULL,
	`message` text,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`node_id`, `pot_id`)
);
--> statement-breakpoint
CREATE INDEX `honeypots_pot_id` ON `honeypots` (`pot_id`);--> statement-breakpoint
CREATE TABLE `nodes` (
	`node_id` text PRIMARY KEY NOT NULL,
	`node_name` text NOT NULL,
	`node_type` text NOT NULL,
	`status` text NOT NULL,
	`address` text,
	`port` integer,
	`registered_at` integer NOT NULL,
	`last_seen` integer NOT NULL
);
