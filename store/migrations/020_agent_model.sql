-- An agent's own instructions (its system prompt) and the model it runs on (`provider/model`).
alter table agents add column instructions text not null default '';
alter table agents add column model text not null default 'scripted/demo';
