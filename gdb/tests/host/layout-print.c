// SPDX-License-Identifier: MIT
/*
 * The layouts and constants of gcswalk.h that the GDB plugin copies into
 * ctypes (gdb/gcsgdb/library.py), as the compiler lays them out:
 *   struct NAME SIZE
 *   field NAME.FIELD OFFSET SIZE
 *   const NAME VALUE
 * layout-test.py compares them with the plugin's. A struct or constant
 * the plugin copies must be here (the test fails on one it cannot find).
 */
#include <stddef.h>
#include <stdio.h>

#include <gcswalk.h>

#define STRUCT(s) printf("struct %s %zu\n", #s, sizeof(struct s))
#define FIELD(s, f) \
	printf("field %s.%s %zu %zu\n", #s, #f, offsetof(struct s, f), sizeof(((struct s *)0)->f))
#define CONST(c) printf("const %s %lld\n", #c, (long long)(c))

static void structs(void)
{
	STRUCT(gcswalk_gcs_state);
	FIELD(gcswalk_gcs_state, features_enabled);
	FIELD(gcswalk_gcs_state, features_locked);
	FIELD(gcswalk_gcs_state, gcspr);
	STRUCT(gcswalk_thread_info);
	FIELD(gcswalk_thread_info, tid);
	FIELD(gcswalk_thread_info, name);
	FIELD(gcswalk_thread_info, have_registers);
	FIELD(gcswalk_thread_info, pc);
	FIELD(gcswalk_thread_info, lr);
	FIELD(gcswalk_thread_info, sp);
	FIELD(gcswalk_thread_info, fp);
	FIELD(gcswalk_thread_info, have_gcs);
	FIELD(gcswalk_thread_info, gcs);
	STRUCT(gcswalk_source_thread);
	FIELD(gcswalk_source_thread, size);
	FIELD(gcswalk_source_thread, tid);
	FIELD(gcswalk_source_thread, name);
	FIELD(gcswalk_source_thread, have_registers);
	FIELD(gcswalk_source_thread, pc);
	FIELD(gcswalk_source_thread, lr);
	FIELD(gcswalk_source_thread, sp);
	FIELD(gcswalk_source_thread, fp);
	FIELD(gcswalk_source_thread, have_gcs);
	FIELD(gcswalk_source_thread, gcs);
	STRUCT(gcswalk_mapping);
	FIELD(gcswalk_mapping, start);
	FIELD(gcswalk_mapping, end);
	FIELD(gcswalk_mapping, offset);
	FIELD(gcswalk_mapping, path);
	STRUCT(gcswalk_source);
	FIELD(gcswalk_source, size);
	FIELD(gcswalk_source, pid);
	FIELD(gcswalk_source, read);
	FIELD(gcswalk_source, data);
	FIELD(gcswalk_source, threads);
	FIELD(gcswalk_source, thread_count);
	FIELD(gcswalk_source, mappings);
	FIELD(gcswalk_source, mapping_count);
	FIELD(gcswalk_source, machine);
	STRUCT(gcswalk_frame);
	FIELD(gcswalk_frame, kind);
	FIELD(gcswalk_frame, source);
	FIELD(gcswalk_frame, address);
	FIELD(gcswalk_frame, slot);
	STRUCT(gcswalk_record_check);
	FIELD(gcswalk_record_check, record);
	FIELD(gcswalk_record_check, return_address);
	FIELD(gcswalk_record_check, verdict);
	FIELD(gcswalk_record_check, gcs_slot);
	STRUCT(gcswalk_region);
	FIELD(gcswalk_region, size);
	FIELD(gcswalk_region, kind);
	FIELD(gcswalk_region, start);
	FIELD(gcswalk_region, end);
	STRUCT(gcswalk_signal_info);
	FIELD(gcswalk_signal_info, size);
	FIELD(gcswalk_signal_info, signo);
	FIELD(gcswalk_signal_info, code);
	FIELD(gcswalk_signal_info, error);
	FIELD(gcswalk_signal_info, address);
	FIELD(gcswalk_signal_info, tid);
	FIELD(gcswalk_signal_info, thread_index);
	STRUCT(gcswalk_walk_options);
	FIELD(gcswalk_walk_options, size);
	FIELD(gcswalk_walk_options, method);
	FIELD(gcswalk_walk_options, flags);
	FIELD(gcswalk_walk_options, max_frames);
	FIELD(gcswalk_walk_options, symbolizer);
}

static void constants(void)
{
	CONST(GCSWALK_OK);
	CONST(GCSWALK_END);
	CONST(GCSWALK_CUT);
	CONST(GCSWALK_E_INVALID);
	CONST(GCSWALK_E_NO_GCS_CPU);
	CONST(GCSWALK_E_GCS_DISABLED);
	CONST(GCSWALK_E_IO);
	CONST(GCSWALK_E_NO_GCS_NOTE);
	CONST(GCSWALK_FRAME_PC);
	CONST(GCSWALK_FRAME_LR);
	CONST(GCSWALK_FRAME_RETURN);
	CONST(GCSWALK_FRAME_SIGRETURN);
	CONST(GCSWALK_FRAME_SIGNAL_CAP);
	CONST(GCSWALK_FRAME_SWITCH_CAP);
	CONST(GCSWALK_FRAME_TERMINATOR);
	CONST(GCSWALK_FRAME_UNREADABLE);
	CONST(GCSWALK_FRAME_INVALID);
	CONST(GCSWALK_FRAME_INTERRUPTED_PC);
	CONST(GCSWALK_ATTACH_STOPPED);
	CONST(GCSWALK_LANDING_PADS);
	CONST(GCSWALK_GCS_ENABLE);
	CONST(GCSWALK_GCS_WRITE);
	CONST(GCSWALK_GCS_PUSH);
	CONST(GCSWALK_RECORD_MATCHES);
	CONST(GCSWALK_RECORD_UNCHECKED);
	CONST(GCSWALK_RECORD_MISMATCH);
	CONST(GCSWALK_RECORD_OLDER_THAN_GCS);
	CONST(GCSWALK_RECORD_OTHER_STACK);
	CONST(GCSWALK_RECORD_BAD_LINK);
	CONST(GCSWALK_REGISTER_LR_MISMATCH);
	CONST(GCSWALK_REGISTER_FP_NOT_RECORD);
	CONST(GCSWALK_REGION_GCS);
}

int main(void)
{
	structs();
	constants();
	return fflush(stdout) == 0 ? 0 : 1;
}
