// The export dialog (see export_dialog.h).
#include "ui/common/export_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

namespace ndrui {

ExportChoice ExportChoice::remembered(const QString& folderKey, ColourScheme scheme) {
    const QSettings settings;
    ExportChoice c;
    c.folder = settings.value(folderKey).toString();
    QString ignored;
    if (const auto formats = parseFormats(settings.value("export/formats", "png").toString(), &ignored))
        c.formats = *formats;
    c.style = styleNamed(settings.value("export/style").toString()).value_or(FigureStyle::Screen);
    c.scheme = scheme;
    schemeNamed(settings.value("export/colours").toString(), &c.scheme);
    return c;
}

void ExportChoice::remember(const QString& folderKey) const {
    QSettings settings;
    settings.setValue(folderKey, folder);
    settings.setValue("export/formats", formatNames(formats).join(','));
    settings.setValue("export/style", styleName(style));
    settings.setValue("export/colours", schemeName(scheme));
}

ExportDialog::ExportDialog(const QString& title, const ExportChoice& initial, QWidget* parent)
    : QDialog(parent) {
    setObjectName("exportDialog");
    setWindowTitle(title);
    auto* form = new QFormLayout;

    folder_ = new QLineEdit(QDir::toNativeSeparators(initial.folder), this);
    folder_->setObjectName("export.folder");
    folder_->setMinimumWidth(320);
    auto* browse = new QPushButton(tr("Browse…"), this);
    browse->setObjectName("export.browse");
    auto* folderRow = new QHBoxLayout;
    folderRow->addWidget(folder_, 1);
    folderRow->addWidget(browse);
    form->addRow(tr("Folder:"), folderRow);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, windowTitle(), folder_->text());
        if (!dir.isEmpty())
            folder_->setText(QDir::toNativeSeparators(dir));
    });

    png_ = new QCheckBox(tr("PNG"), this);
    pdf_ = new QCheckBox(tr("PDF"), this);
    svg_ = new QCheckBox(tr("SVG"), this);
    png_->setObjectName("export.png");
    pdf_->setObjectName("export.pdf");
    svg_->setObjectName("export.svg");
    png_->setToolTip(tr("Images, for the web and slides"));
    pdf_->setToolTip(tr("Vector figures for papers: text stays text, lines stay lines"));
    svg_->setToolTip(tr("Vector figures for the web and for editing"));
    png_->setChecked(initial.formats.contains(FigureFormat::Png));
    pdf_->setChecked(initial.formats.contains(FigureFormat::Pdf));
    svg_->setChecked(initial.formats.contains(FigureFormat::Svg));
    auto* formats = new QHBoxLayout;
    for (QCheckBox* box : {png_, pdf_, svg_}) {
        formats->addWidget(box);
        connect(box, &QCheckBox::toggled, this, &ExportDialog::check);
    }
    formats->addStretch(1);
    form->addRow(tr("Formats:"), formats);

    style_ = new QComboBox(this);
    style_->setObjectName("export.style");
    style_->addItem(tr("Screen: as the window shows it"), int(FigureStyle::Screen));
    style_->addItem(tr("Paper: a column wide, 8.5 pt text, on white"), int(FigureStyle::Paper));
    style_->setCurrentIndex(style_->findData(int(initial.style)));
    form->addRow(tr("Style:"), style_);

    scheme_ = new QComboBox(this);
    scheme_->setObjectName("export.colours");
    scheme_->addItem(tr("Standard"), int(ColourScheme::Standard));
    scheme_->addItem(tr("Colour-blind safe (Okabe-Ito, cividis)"), int(ColourScheme::ColourBlindSafe));
    scheme_->setCurrentIndex(scheme_->findData(int(initial.scheme)));
    form->addRow(tr("Colours:"), scheme_);

    problem_ = new QLabel(this);
    problem_->setObjectName("export.problem");
    problem_->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel, this);
    ok_ = buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    ok_->setObjectName("export.ok");
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(folder_, &QLineEdit::textChanged, this, &ExportDialog::check);

    auto* root = new QVBoxLayout(this);
    root->addLayout(form);
    root->addWidget(problem_);
    root->addWidget(buttons);
    check();
}

ExportChoice ExportDialog::choice() const {
    ExportChoice c;
    c.folder = QDir::fromNativeSeparators(folder_->text().trimmed());
    c.formats.clear();
    if (png_->isChecked())
        c.formats << FigureFormat::Png;
    if (pdf_->isChecked())
        c.formats << FigureFormat::Pdf;
    if (svg_->isChecked())
        c.formats << FigureFormat::Svg;
    c.style = FigureStyle(style_->currentData().toInt());
    c.scheme = ColourScheme(scheme_->currentData().toInt());
    return c;
}

QString ExportDialog::problem() const {
    const ExportChoice c = choice();
    if (c.folder.isEmpty())
        return tr("Choose a folder to export into.");
    if (QFileInfo(c.folder).exists() && !QFileInfo(c.folder).isDir())
        return tr("%1 is a file, not a folder.").arg(QDir::toNativeSeparators(c.folder));
    if (c.formats.isEmpty())
        return tr("Choose at least one format.");
    return {};
}

void ExportDialog::check() {
    const QString why = problem();
    problem_->setText(why);
    problem_->setVisible(!why.isEmpty());
    ok_->setEnabled(why.isEmpty());
}

} // namespace ndrui
