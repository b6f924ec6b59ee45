// The vocabulary the scheduler's decisions are made in (priorities, lanes, progress, a host's
// health policy) is declared beside those decisions, in the machine's module, and is part of
// this module's API: an app imports NetworkScheduler alone.
@_exported import NetworkSchedulerMachine
