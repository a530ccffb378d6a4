// The dialog of an export from the app (File > Export… and the Compare tab's Export…): the folder, the
// formats (PNG, PDF, SVG), the style (screen or paper) and the colours (standard or colour-blind
// safe). What was chosen is remembered for the next export.
#pragma once

#include "ui/common/figure_options.h"
#include "ui/common/palette.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace ndrui {

struct ExportChoice {
    QString folder;
    QList<FigureFormat> formats{FigureFormat::Png};
    FigureStyle style = FigureStyle::Screen;
    ColourScheme scheme = ColourScheme::Standard;

    // The choice kept in the settings: the folder under `folderKey`, the rest shared by every export;
    // the scheme `scheme` (the app's) when none was kept.
    static ExportChoice remembered(const QString& folderKey, ColourScheme scheme);
    void remember(const QString& folderKey) const;
};

class ExportDialog : public QDialog {
    Q_OBJECT

public:
    ExportDialog(const QString& title, const ExportChoice& initial, QWidget* parent = nullptr);

    ExportChoice choice() const;
    // What keeps Export from being pressed ("Choose a folder."), empty when nothing does.
    QString problem() const;

private:
    void check();

    QLineEdit* folder_;
    QCheckBox* png_;
    QCheckBox* pdf_;
    QCheckBox* svg_;
    QComboBox* style_;
    QComboBox* scheme_;
    QLabel* problem_;
    QPushButton* ok_;
};

} // namespace ndrui
