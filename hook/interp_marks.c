/* What interp_code.c looks for in an interpreter's code: the marks of a network or
 * exec facility, of values made at run time and of reflection, and the calls that run
 * a command. Tables (interp_int.h), NULL-terminated. */
#include <stddef.h>

#include "hook/interp_int.h"

/* Network facilities: code that contains one may connect somewhere. */
const char *const hook_net_marks[] = {
    "urlopen",
    "urllib",
    "requests.",
    "httpx",
    "http.client",
    "HTTPConnection",
    "HTTPSConnection",
    "socket",
    "aiohttp",
    "fetch(",
    "http.get",
    "https.get",
    "http.request",
    "https.request",
    "net.connect",
    "createConnection",
    "tls.connect",
    "axios",
    "XMLHttpRequest",
    "WebSocket",
    "LWP",
    "HTTP::Tiny",
    "IO::Socket",
    "Net::",
    "open-uri",
    "URI.open",
    "TCPSocket",
    "UDPSocket",
    "Socket",
    "Faraday",
    "fsockopen",
    "stream_socket",
    "curl_init",
    "file_get_contents",
    "/inet/",
    "ftplib",
    "smtplib",
    "telnetlib",
    "paramiko",
    "dgram",
    "getaddrinfo",
    "gethostbyname",
    "Deno.connect",
    "Bun.connect",
    "require('http",
    "require(\"http",
    "require('net",
    "require(\"net",
    "download.file", /* R */
    "url(",
    "socketConnection",
    "httr",
    "RCurl",
    "Downloads", /* julia */
    "HTTP.",
    "Sockets",
    "Invoke-WebRequest", /* PowerShell */
    "Invoke-RestMethod",
    "iwr ",
    "irm ",
    "WebClient",
    "HttpClient",
    "TcpClient",
    "Start-BitsTransfer",
    NULL,
};

/* Values made at run time: with a network or exec facility, the code cannot be judged. */
const char *const hook_dyn_marks[] = {
    "base64",	 "b64decode", "atob(",	      "fromCharCode", "unhexlify",  "fromhex",
    "decode(",	 "codecs",    "zlib",	      "marshal",      "pickle",	    "rot13",
    "[::-1]",	 "reverse",   "chr(",	      "pack(",	      "__import__", "getattr(",
    "importlib", "environ",   "getenv",	      "ENV[",	      "$ENV",	    "process.env",
    "sys.argv",	 "ARGV",      "process.argv", "$_SERVER",     "$_GET",	    "input(",
    "stdin",	 "STDIN",     "readline",     "Buffer.from",  "eval",	    "Function(",
    "compile(",	 "getline <", "$0",	      "ENVIRON",      "<>",	    "gets",
    NULL,
};

/* Reflection: a function named at run time may be any of them (getattr(os, "sys" +
 * "tem"), Kernel.send, call_user_func): the code counts as running commands, with
 * values made at run time. */
const char *const hook_refl_marks[] = {
    "getattr",	   "__import__",      "importlib",	 "__builtins__",
    "__dict__",	   "globals()",	      "vars(",		 "eval",
    "Function(",   "process.binding", "mainModule",	 "send(",
    "public_send", "__send__",	      "const_get",	 "instance_eval",
    "class_eval",  "call_user_func",  "->can(",		 "&{",
    "*{",	   "Reflection",      "create_function", "method(",
    NULL,
};

/* Calls that run a command: their arguments must be literals. */
const char *const hook_exec_calls[] = {
    "system",	    "popen",	       "Popen",	       "exec",
    "execv",	    "execvp",	       "execl",	       "execlp",
    "execve",	    "execvpe",	       "execSync",     "execFile",
    "execFileSync", "spawn",	       "spawnSync",    "spawnv",
    "spawnl",	    "spawnvp",	       "shell_exec",   "passthru",
    "proc_open",    "pcntl_exec",      "check_output", "check_call",
    "getoutput",    "getstatusoutput", "capture2",     "capture2e",
    "capture3",	    "popen2",	       "popen3",       "run",
    "call",	    "execute",	       "system2",      NULL,
};

/* Modules whose presence makes run( and call( command calls. */
const char *const hook_exec_mods[] = {"subprocess", "child_process", "Open3",	  "os.exec",
				      "os.spawn",   "pty.spawn",     "commands.", "Deno.Command",
				      "Bun.spawn",  "os.execute",    NULL};
