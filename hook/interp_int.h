/* Private to hook/: the tables interp_code.c reads code with (interp_marks.c). */
#ifndef HALO_HOOK_INTERP_INT_H
#define HALO_HOOK_INTERP_INT_H

/* Network facilities: code that contains one may connect somewhere. */
extern const char *const hook_net_marks[];
/* Values made at run time: with a network or exec facility, the code cannot be judged. */
extern const char *const hook_dyn_marks[];
/* Reflection: a function named at run time may be any of them. */
extern const char *const hook_refl_marks[];
/* Calls that run a command: their arguments must be literals. */
extern const char *const hook_exec_calls[];
/* Modules whose presence makes run( and call( command calls. */
extern const char *const hook_exec_mods[];

#endif
