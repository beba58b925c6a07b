// SPDX-License-Identifier: MIT
/*
 * gcsprof record: the command gcsprof launches (child.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gcsprof.h"
#include "child.h"
#include "env.h"

void rec_child_init(struct rec_child *c)
{
	memset(c, 0, sizeof(*c));
	c->exec_err_fd = -1;
}

/* In the forked child: wait to be released, then exec ARGV. */
static void __attribute__((noreturn)) run_command(char **argv, const struct rec_env *env,
						  const sigset_t *old_mask, int sync_fd,
						  int err_fd)
{
	char c;
	int e;

	rec_env_apply(env);
	(void)sigprocmask(SIG_SETMASK, old_mask, NULL);
	/* Wait until the parent is ready for us (it closes its end). */
	while (read(sync_fd, &c, 1) < 0 && errno == EINTR)
		;
	execvp(argv[0], argv);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(GP_EXIT_EXEC);
	_exit(e == ENOENT ? GP_EXIT_EXEC : 126);
}

int rec_child_spawn(struct rec_child *c, char **argv, const char *tunable,
		    const sigset_t *old_mask, int *release_fd)
{
	int sync_pipe[2], err_pipe[2];
	struct rec_env env;
	pid_t pid;

	if (rec_env_for_command(&env, tunable))
		return GP_EXIT_SYSTEM;
	if (pipe2(sync_pipe, O_CLOEXEC) != 0) {
		rec_env_free(&env);
		return gp_error(GP_EXIT_SYSTEM, "pipe: %s", strerror(errno));
	}
	if (pipe2(err_pipe, O_CLOEXEC) != 0) {
		close(sync_pipe[0]);
		close(sync_pipe[1]);
		rec_env_free(&env);
		return gp_error(GP_EXIT_SYSTEM, "pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		rec_env_free(&env);
		return gp_error(GP_EXIT_SYSTEM, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(sync_pipe[1]);
		close(err_pipe[0]);
		run_command(argv, &env, old_mask, sync_pipe[0], err_pipe[1]);
	}
	rec_env_free(&env);
	close(sync_pipe[0]);
	close(err_pipe[1]);
	c->pid = pid;
	c->exec_err_fd = err_pipe[0];
	*release_fd = sync_pipe[1];
	return 0;
}

void rec_child_release(int release_fd)
{
	close(release_fd);
}

void rec_child_abandon(struct rec_child *c, int release_fd)
{
	close(release_fd);
	kill(c->pid, SIGKILL);
	(void)waitpid(c->pid, NULL, 0);
	c->pid = 0;
}

void rec_child_poll(struct rec_child *c)
{
	int st;

	if (c->pid && !c->done && waitpid(c->pid, &st, WNOHANG) == c->pid &&
	    (WIFEXITED(st) || WIFSIGNALED(st)))
		rec_child_exited(c, st);
}

void rec_child_exited(struct rec_child *c, int status)
{
	c->done = 1;
	c->status = status;
}

int rec_child_exec_error(const struct rec_child *c)
{
	int e = 0;

	if (c->exec_err_fd >= 0 && read(c->exec_err_fd, &e, sizeof(e)) == (ssize_t)sizeof(e))
		return e;
	return 0;
}

void rec_child_free(struct rec_child *c)
{
	if (c->exec_err_fd >= 0)
		close(c->exec_err_fd);
	c->exec_err_fd = -1;
}
