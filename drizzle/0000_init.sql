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
CREATE TABLE `event_counts` (
	`kind` text NOT NULL,
	`bucket` integer NOT NULL,
	`key` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`kind`, `bucket`, `key`)
);
--> statement-breakpoint
CREATE TABLE `event_meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `event_segment_keys` (
	`kind` text NOT NULL,
	`value` integer NOT NULL,
	`seg` integer NOT NULL,
	PRIMARY KEY(`kind`, `value`, `seg`)
);
--> statement-breakpoint
CREATE TABLE `event_segments` (
	`seg` integer PRIMARY KEY NOT NULL,
	`min_ts` integer NOT NULL,
	`max_ts` integer NOT NULL,
	`count` integer NOT NULL,
	`ip_bloom` blob NOT NULL
);
--> statement-breakpoint
CREATE TABLE `event_sources` (
	`id` integer PRIMARY KEY NOT NULL,
	`node_id` text,
	`pot_id` text,
	`pot_type` text
);
--> statement-breakpoint
CREATE TABLE `event_types` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `event_types_name_unique` ON `event_types` (`name`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY NOT NULL,
	`ts` integer NOT NULL,
	`source_id` integer NOT NULL,
	`type_id` integer NOT NULL,
	`src_ip` text,
	`data` text NOT NULL
);
--> statement-breakpoint
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
CREATE TABLE `node_secrets` (
	`node_id` text PRIMARY KEY NOT NULL,
	`secret` text NOT NULL,
	`control_step` integer DEFAULT 0 NOT NULL,
	`events_step` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
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
