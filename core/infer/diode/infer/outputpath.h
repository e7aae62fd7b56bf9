#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// Refuses, before any work, an output path (`what`: "--out", "--chosen") that would destroy data or
/// is not a file: one of the command's `inputs` (the same file by device and inode, a path through a
/// link included), shipped data, a symbolic link, a directory, a device, a FIFO or a socket
/// (InvalidInput naming the path and why). A path that does not exist yet is fine. writeFileAtomically
/// (diode/atomicfile.h), which every output goes through, checks all but the inputs again just
/// before it renames.
void refuseOutputPath(const std::string &path, const std::vector<std::string> &inputs, std::string_view what);

/// Refuses `path` (`what`: "--db") when it is one of `inputs`, the same file by device and inode
/// (InvalidInput "WHAT 'PATH' is the input 'IN': CONSEQUENCE"): refuseOutputPath's check of the
/// inputs, for a file written in place rather than replaced (a store a sweep writes into).
void refuseInputPath(const std::string &path, const std::vector<std::string> &inputs, std::string_view what,
                     std::string_view consequence);

} // namespace diode
