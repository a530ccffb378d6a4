// Qt's notices that say nothing to a user of the app or of `ndr export`: the offscreen platform cannot
// size windows on a screen, and a session without a runtime folder (root in a container) is given a
// temporary one. Every other message goes where it went before.
#pragma once

namespace ndrui {

void hidePlatformNotices();

} // namespace ndrui
