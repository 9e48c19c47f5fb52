CREATE TABLE `event_addresses` (
	`ip` text PRIMARY KEY NOT NULL,
	`country` text,
	`asn` integer,
	`as_org` text,
	`first_seen` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `event_addresses_country` ON `event_addresses` (`country`);--> statement-breakpoint
CREATE INDEX `event_addresses_asn` ON `event_addresses` (`asn`);