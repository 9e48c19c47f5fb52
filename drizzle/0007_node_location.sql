ALTER TABLE `nodes` ADD `lat` real;--> statement-breakpoint
ALTER TABLE `nodes` ADD `lon` real;--> statement-breakpoint
ALTER TABLE `nodes` ADD `location_label` text;